import { idParams, paginated } from "#shared/schemas/common.ts";
import { listProxiesQuery, patchProxyBody, proxyBody, proxySchema } from "#shared/schemas/proxies.ts";
import { problem, routeGroup } from "./group.ts";

/** Pre-configured proxies: their management. */
export const proxiesRoutes = routeGroup("proxies", {
  createProxy: {
    answersCredential: true,
    method: "POST",
    path: "/proxies",
    auth: "key",
    permissions: ["proxy:create"],
    summary: "Create a pre-configured proxy (its key is generated)",
    body: proxyBody,
    responses: { 201: { description: "Proxy", schema: proxySchema } },
  },
  listProxies: {
    // A member's own key reads each proxy's key.
    answersCredential: true,
    method: "GET",
    path: "/proxies",
    auth: "key",
    permissions: ["proxy:read"],
    summary: "List proxies (id repeatable; name with * wildcards)",
    query: listProxiesQuery,
    responses: { 200: { description: "Page of proxies", schema: paginated(proxySchema) } },
  },
  getProxy: {
    answersCredential: true,
    method: "GET",
    path: "/proxies/{id}",
    auth: "key",
    permissions: ["proxy:read"],
    summary: "Get a proxy",
    params: idParams,
    responses: { 200: { description: "Proxy", schema: proxySchema }, 404: problem("Not found") },
  },
  replaceProxy: {
    method: "PUT",
    path: "/proxies/{id}",
    auth: "key",
    permissions: ["proxy:update"],
    summary: "Replace a proxy's fields (its key stays)",
    params: idParams,
    body: proxyBody,
    responses: { 200: { description: "Proxy", schema: proxySchema }, 404: problem("Not found") },
  },
  patchProxy: {
    method: "PATCH",
    path: "/proxies/{id}",
    auth: "key",
    permissions: ["proxy:update"],
    summary: "Update a proxy (RFC 7386 merge patch)",
    params: idParams,
    body: patchProxyBody,
    contentType: "application/merge-patch+json",
    responses: {
      204: { description: "Updated" },
      404: problem("Not found"),
      415: problem("Not application/merge-patch+json"),
    },
  },
  rotateProxyKey: {
    answersCredential: true,
    method: "POST",
    path: "/proxies/{id}/key/rotate",
    auth: "key",
    permissions: ["proxy:update"],
    summary:
      "Give a proxy a new key (the old one stops); a member's own key only, to whom the new key is answered",
    params: idParams,
    responses: {
      200: { description: "Proxy, with its new key", schema: proxySchema },
      403: problem("Not a member's own key"),
      404: problem("Not found"),
    },
  },
  deleteProxy: {
    method: "DELETE",
    path: "/proxies/{id}",
    auth: "key",
    permissions: ["proxy:delete"],
    summary: "Delete a proxy (its key stops working)",
    params: idParams,
    responses: { 204: { description: "Deleted" }, 404: problem("Not found") },
  },
});
