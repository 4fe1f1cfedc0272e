import { expect } from "vitest";
import { client, createTenant } from "./http.ts";

/**
 * A new tenant's open proxy (require_auth: false, so its key is a link anyone can be sent) to `destinationUrl`,
 * acting as a private application holding token:use. Answers the proxy key.
 */
export async function openProxy(
  serviceUrl: string,
  rootKey: string,
  destinationUrl: string,
  extra: Record<string, unknown> = {},
): Promise<string> {
  const api = client(serviceUrl);
  const { managementKey } = await createTenant(api, rootKey);
  const app = await api.post<{ id: string }>("/applications", {
    key: managementKey,
    body: { name: "proxy app", type: "private", permissions: ["token:use"] },
  });
  const proxy = await api.post<{ key: string }>("/proxies", {
    key: managementKey,
    body: {
      name: "open",
      destination_url: destinationUrl,
      require_auth: false,
      application: { id: app.body.id },
      ...extra,
    },
  });
  expect(proxy.status, JSON.stringify(proxy.body)).toBe(201);
  return proxy.body.key;
}
