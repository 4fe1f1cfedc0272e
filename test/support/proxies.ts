import { expect } from "vitest";
import { type Client, client, createTenant } from "./http.ts";
import type { TokenBody } from "./tokens.ts";

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

/**
 * A use-only caller's view of an open proxy to `destinationUrl`: its application creates tokens (`token`) and may
 * use but not read them; `json` and `form` invoke the proxy with the proxy key alone, as anyone holding it can.
 */
export async function useOnlyProxy(serviceUrl: string, rootKey: string, destinationUrl: string) {
  const api = client(serviceUrl);
  const { managementKey } = await createTenant(api, rootKey);
  const app = await api.post<{ id: string; key: string }>("/applications", {
    key: managementKey,
    body: { name: "user", type: "private", permissions: ["token:create", "token:use"] },
  });
  const token = async (type: string, data: unknown) => {
    const res = await api.post<TokenBody>("/tokens", { key: app.body.key, body: { type, data } });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    return res.body.id;
  };
  const proxy = await api.post<{ key: string }>("/proxies", {
    key: managementKey,
    body: {
      name: "psp",
      destination_url: destinationUrl,
      require_auth: false,
      application: { id: app.body.id },
    },
  });
  expect(proxy.status, JSON.stringify(proxy.body)).toBe(201);
  const json = (body: unknown) =>
    api.post<Record<string, unknown>>("/proxy", { headers: { "svc-proxy-key": proxy.body.key }, body });
  const form = (body: string) =>
    api.post<Record<string, unknown>>("/proxy", {
      headers: { "svc-proxy-key": proxy.body.key, "content-type": "application/x-www-form-urlencoded" },
      rawBody: body,
    });
  return { api, app, token, json, form };
}
