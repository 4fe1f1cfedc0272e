/** The benchmark's set-up and its unloaded measurements go through the service's public HTTP API. */

/** One request; throws unless the status is `expected`. Answers the parsed JSON body (undefined when empty). */
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
  if (res.status !== expected)
    throw new Error(`${method} ${path} answered ${res.status} (expected ${expected}): ${text.slice(0, 500)}`);
  return (text ? JSON.parse(text) : undefined) as T;
}
