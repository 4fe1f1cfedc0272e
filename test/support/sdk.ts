/**
 * The hosted vault's SDK against this service: the one difference on the wire is the header prefix (`BT-` there,
 * `SVC-` here). A fetch that renames request headers for the service's base URL, and response headers back;
 * paths, bodies and everything sent elsewhere are left as they are.
 */
export function renamingFetch(baseUrl: string, inner: typeof fetch = fetch): typeof fetch {
  const rename = (headers: Headers, from: RegExp, to: string) => {
    const out = new Headers();
    headers.forEach((value, name) => {
      out.append(name.replace(from, to), value);
    });
    return out;
  };
  return async (input, init) => {
    const url = input instanceof Request ? input.url : String(input);
    if (!url.startsWith(baseUrl)) return inner(input, init);
    const request = new Request(input, init);
    const renamed = new Request(request, { headers: rename(request.headers, /^bt-/i, "svc-") });
    const response = await inner(renamed);
    return new Response(response.body, {
      status: response.status,
      statusText: response.statusText,
      headers: rename(response.headers, /^svc-/i, "bt-"),
    });
  };
}
