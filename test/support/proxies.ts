import { expect } from "vitest";
import { type Client, client, createTenant } from "./http.ts";

/** A new tenant's open proxy: a client, the tenant's management key and the proxy key. */
export interface NewOpenProxy {
  api: Client;
  managementKey: string;
  /** The proxy's application (private, token:use). */
  applicationId: string;
  key: string;
}

/**
 * A new tenant's open proxy (require_auth: false, so its key is a link anyone can be sent) to `destinationUrl`,
 * acting as a private application holding token:use; `extra` adds to (or replaces) the proxy's fields.
 */
export async function createOpenProxy(
  serviceUrl: string,
  rootKey: string,
  destinationUrl: string,
  extra: Record<string, unknown> = {},
): Promise<NewOpenProxy> {
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
  return { api, managementKey, applicationId: app.body.id, key: proxy.body.key };
}

/** `createOpenProxy`'s proxy key alone. */
export async function openProxy(
  serviceUrl: string,
  rootKey: string,
  destinationUrl: string,
  extra: Record<string, unknown> = {},
): Promise<string> {
  return (await createOpenProxy(serviceUrl, rootKey, destinationUrl, extra)).key;
}
