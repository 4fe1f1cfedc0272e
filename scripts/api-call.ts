/** One request to the service's public HTTP API, as the scripts (bench, cost, chaos, fuzz, dev) make it. */

/** Throws unless the status is `expected`; answers the parsed JSON body (undefined when empty). */
export async function call<T>(
  base: string,
  method: string,
  path: string,
  key: string | undefined,
  body: unknown,
  expected: number,
  headers: Record<string, string> = {},
): Promise<T> {
  const res = await fetch(`${base}${path}`, {
    method,
    headers: {
      ...(key ? { "svc-api-key": key } : {}),
      ...(body !== undefined ? { "content-type": "application/json" } : {}),
      ...headers,
    },
    body: body === undefined ? undefined : typeof body === "string" ? body : JSON.stringify(body),
  });
  const text = await res.text();
  // A problem's body carries no key (docs/security.md, logging rules).
  if (res.status !== expected)
    throw new Error(`${method} ${path} answered ${res.status} (expected ${expected}): ${text.slice(0, 500)}`);
  return (text ? JSON.parse(text) : undefined) as T;
}

/** A POST that creates: 201 expected. */
export const post = <T>(base: string, path: string, key: string, body: unknown) =>
  call<T>(base, "POST", path, key, body, 201);
