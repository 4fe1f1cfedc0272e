export interface HttpResponse<T = unknown> {
  status: number;
  headers: Headers;
  body: T;
}

export interface RequestOptions {
  key?: string;
  body?: unknown;
  rawBody?: string;
  headers?: Record<string, string>;
}

/** A small client for integration tests: JSON in, JSON (or text) out, nothing hidden. */
export function client(baseUrl: string) {
  const call = async <T = Record<string, unknown>>(
    method: string,
    path: string,
    options: RequestOptions = {},
  ): Promise<HttpResponse<T>> => {
    const headers: Record<string, string> = { ...options.headers };
    if (options.key) headers["svc-api-key"] = options.key;
    let body: string | undefined = options.rawBody;
    if (options.body !== undefined) {
      body = JSON.stringify(options.body);
      headers["content-type"] ??= "application/json";
    }
    const res = await fetch(`${baseUrl}${path}`, { method, headers, body });
    const text = await res.text();
    let parsed: unknown = text;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      // not JSON: keep the text
    }
    return { status: res.status, headers: res.headers, body: parsed as T };
  };
  return {
    get: <T = Record<string, unknown>>(path: string, o?: RequestOptions) => call<T>("GET", path, o),
    post: <T = Record<string, unknown>>(path: string, o?: RequestOptions) => call<T>("POST", path, o),
    put: <T = Record<string, unknown>>(path: string, o?: RequestOptions) => call<T>("PUT", path, o),
    patch: <T = Record<string, unknown>>(path: string, o?: RequestOptions) => call<T>("PATCH", path, o),
    delete: <T = Record<string, unknown>>(path: string, o?: RequestOptions) => call<T>("DELETE", path, o),
    call,
  };
}

export type Client = ReturnType<typeof client>;

/** Creates a tenant with the root key and returns its management key and ids. */
export async function createTenant(api: Client, rootKey: string, name = "Acme") {
  const res = await api.post<{ id: string; management_key: string; management_application_id: string }>(
    "/tenants",
    { key: rootKey, body: { name } },
  );
  if (res.status !== 201)
    throw new Error(`tenant creation failed: ${res.status} ${JSON.stringify(res.body)}`);
  return {
    tenantId: res.body.id,
    managementKey: res.body.management_key,
    managementAppId: res.body.management_application_id,
  };
}

/**
 * A body as text with the identifiers and times the service generates blanked out, for asserting that a value
 * (a card's last 4, a cvc) is absent: a random request id or token UUID may hold "4242" or "737" by chance.
 */
export function bodyText(body: unknown): string {
  return JSON.stringify(body)
    .replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/gi, "<uuid>")
    .replace(/\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?Z/g, "<time>");
}

/**
 * A management application that may add keys to itself (application:update), with its first key: what a leaked key
 * of such an application can do while its owner deletes it.
 */
export async function selfKeyingApplication(api: Client, managementKey: string) {
  const made = await api.post<{ id: string; key: string }>("/applications", {
    key: managementKey,
    body: { name: "leaked", type: "management", permissions: ["application:update", "application:read"] },
  });
  if (made.status !== 201) throw new Error(`creating the application answered ${made.status}`);
  return made.body;
}
