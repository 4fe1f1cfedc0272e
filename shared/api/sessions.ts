import { authorizeSessionBody, sessionCreatedSchema } from "#shared/schemas/sessions.ts";
import { problem, routeGroup } from "./group.ts";

/** Sessions: public keys with no access until a private application authorizes them. */
export const sessionsRoutes = routeGroup("sessions", {
  createSession: {
    answersCredential: true,
    method: "POST",
    path: "/sessions",
    auth: "key",
    cors: true,
    summary: "Create a session (public key): a key with no access until a private application authorizes it",
    responses: {
      201: { description: "Session key and its one-time nonce", schema: sessionCreatedSchema },
    },
  },
  authorizeSession: {
    method: "POST",
    path: "/sessions/authorize",
    auth: "key",
    summary: "Authorize a session by its nonce (private key), granting permissions and/or rules",
    body: authorizeSessionBody,
    responses: {
      200: { description: "Authorized (no payload)" },
      404: problem("Unknown or expired nonce"),
      409: problem("Already authorized"),
    },
  },
});
