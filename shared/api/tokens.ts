import { idParams, paginated } from "#shared/schemas/common.ts";
import { createTokenBody, listTokensQuery, patchTokenBody, tokenSchema } from "#shared/schemas/tokens.ts";
import { problem, routeGroup } from "./group.ts";

/** Tokens: tokenize, read, update and delete (session keys may call these). */
export const tokensRoutes = routeGroup("tokens", {
  createToken: {
    allowSessions: true,
    method: "POST",
    path: "/tokens",
    auth: "key",
    cors: true,
    permissions: ["token:create"],
    summary: "Tokenize data (answered masked)",
    body: createTokenBody,
    responses: {
      201: { description: "Created, or the existing token when deduplicated", schema: tokenSchema },
      409: problem("The id is taken"),
    },
  },
  listTokens: {
    allowSessions: true,
    method: "GET",
    path: "/tokens",
    auth: "key",
    permissions: ["token:read"],
    summary: "List tokens (filters: id, type repeatable; metadata.<key> case-insensitive), newest first",
    query: listTokensQuery,
    responses: { 200: { description: "Page of tokens", schema: paginated(tokenSchema) } },
  },
  getToken: {
    allowSessions: true,
    method: "GET",
    path: "/tokens/{id}",
    auth: "key",
    cors: true,
    permissions: ["token:read"],
    summary: "Read a token, transformed by the caller's access rules",
    params: idParams,
    responses: {
      200: { description: "Token", schema: tokenSchema },
      404: problem("Not found or expired"),
    },
  },
  patchToken: {
    allowSessions: true,
    method: "PATCH",
    path: "/tokens/{id}",
    auth: "key",
    cors: true,
    permissions: ["token:update"],
    summary: "Update a token (RFC 7386 merge patch for data, mask, metadata)",
    params: idParams,
    body: patchTokenBody,
    contentType: "application/merge-patch+json",
    responses: {
      200: { description: "Updated token", schema: tokenSchema },
      404: problem("Not found or expired"),
      415: problem("Not application/merge-patch+json"),
    },
  },
  deleteToken: {
    allowSessions: true,
    method: "DELETE",
    path: "/tokens/{id}",
    auth: "key",
    permissions: ["token:delete"],
    summary: "Delete a token",
    params: idParams,
    responses: { 204: { description: "Deleted" }, 404: problem("Not found or expired") },
  },
});
