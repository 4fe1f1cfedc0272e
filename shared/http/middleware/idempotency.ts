import { createHash } from "node:crypto";
import type { Sealer } from "#shared/domain/crypto/sealer.ts";
import type { Principal } from "#shared/domain/entities.ts";
import { conflict, validationError } from "#shared/domain/errors.ts";
import { grantVersionOf } from "#shared/domain/grant-version.ts";
import { logger } from "#shared/logger.ts";
import type { IdempotencyStore } from "#shared/ports/stores.ts";
import { HttpError } from "../errors.ts";
import { header, type SvcMiddleware, type SvcRequest } from "../request-state.ts";

export const IDEMPOTENT_METHODS = new Set(["POST", "PUT", "PATCH"]);
const KEY_PATTERN = /^[\x21-\x7e]{1,255}$/;
export const REPLAYED_HEADER = "svc-idempotent-replayed";
/**
 * Stored results of callers without a tenant (the root key, anonymous routes) are sealed under this
 * keyring owner: a deployment data key wrapped by the same master key, never a tenant's.
 */
export const DEPLOYMENT_SEAL_OWNER = "_deployment";

const sha256 = (text: string) => createHash("sha256").update(text, "utf8").digest("hex");

/**
 * Request headers that change what a request does, so a replay must match them too: a token write with
 * SVC-TRANSACTION-ID joins a transaction, the same write without it is applied at once. (SVC-API-KEY is the
 * scope; Content-Type is checked before this middleware runs and does not change the outcome of a request that
 * passes; SVC-PROXY-KEY only reaches proxy routes, which are never idempotent.)
 */
export const SIGNED_HEADERS = ["svc-transaction-id"] as const;

interface Signature {
  /** Method, path and query. */
  request: string;
  /** The exact body bytes. */
  body: string;
  /** The SIGNED_HEADERS, present or absent. */
  headers: string;
}

/**
 * What a replay must match: method, path and query, the exact body bytes and the signed headers. Keyed hashes
 * (HMAC under the seal owner's fingerprint key): a plain SHA-256 of a body holding a card number would let
 * anyone with the table (or a backup) test guesses offline.
 */
async function signatureOf(
  sealer: IdempotencyPorts["sealer"],
  request: SvcRequest,
  owner: string,
): Promise<Signature> {
  const { event } = request;
  const query = event.rawQueryString ? `?${event.rawQueryString}` : "";
  const signed = SIGNED_HEADERS.map((name) => {
    const value = header(event, name);
    return value === undefined ? `${name}:absent` : `${name}=${JSON.stringify(value)}`;
  }).join("\n");
  const [route, body, headers] = await Promise.all([
    sealer.fingerprint(
      owner,
      "svc-idempotency-request",
      `${event.requestContext.http.method} ${event.rawPath}${query}`,
    ),
    sealer.fingerprint(
      owner,
      "svc-idempotency-body",
      `${event.isBase64Encoded ? "b64" : "txt"}\n${event.body ?? ""}`,
    ),
    sealer.fingerprint(owner, "svc-idempotency-headers", signed),
  ]);
  return { request: route, body, headers };
}

/**
 * Whose answers a key may replay: the credential that sent the request (an application key, a session) within
 * its tenant, in the state its grant had: the scope ends with a digest of the application's (and session's)
 * permissions and access rules, so after any change of the grant (say reveal downgraded to redact) a stored
 * answer is never replayed and a retry runs afresh under the grant as it is now. Anonymous callers have no
 * credential, so the whole request is the scope: only the same request (for POST /invitations/accept: the
 * same secret code) can ever be answered from a stored result.
 */
function scopeOf(principal: Principal | undefined, signature: Signature) {
  if (!principal)
    return `anonymous:${sha256(`${signature.request}\n${signature.body}\n${signature.headers}`)}`;
  if (principal.kind === "root") return "root";
  const credential =
    principal.kind === "session"
      ? `tenant:${principal.tenantId}:session:${principal.session.id}`
      : `tenant:${principal.tenantId}:key:${principal.keyId}`;
  return `${credential}:grant:${grantVersionOf(principal)}`;
}

const sealOwnerOf = (principal: Principal | undefined) =>
  principal && principal.kind !== "root" ? principal.tenantId : DEPLOYMENT_SEAL_OWNER;

/** The ciphertext is bound to its record: a sealed body copied to another key or scope does not open. */
const bindingOf = (owner: string, scope: string, key: string) => ({
  tenantId: owner,
  tokenId: `idempotency:${sha256(`${scope}\n${key}`)}`,
  field: "response_body",
});

const mismatch = (what: "request body" | "SVC-TRANSACTION-ID") =>
  new HttpError(
    422,
    "idempotency-key-mismatch",
    "Unprocessable Content",
    `This idempotency key was used with a different ${what}.`,
  );

export interface IdempotencyPorts {
  idempotency: IdempotencyStore;
  /** Keys the request signatures and seals the stored answers. */
  sealer: Pick<Sealer, "fingerprint" | "seal" | "open">;
}

/**
 * SVC-IDEMPOTENCY-KEY on POST, PUT and PATCH (the spec's seven rules): a conditional write takes an
 * in-flight marker (a racing duplicate gets 409), a 2xx result is stored for 24 h, its body sealed with the
 * caller's tenant data key, and replayed with SVC-IDEMPOTENT-REPLAYED: true to the same credential for the
 * same request only; a failure releases the key so a retry runs as new.
 */
export function idempotency(ports: () => IdempotencyPorts): SvcMiddleware {
  const release = async (request: SvcRequest) => {
    const claim = request.context.svc?.idempotency;
    if (!claim) return;
    request.context.svc.idempotency = undefined;
    await ports()
      .idempotency.release(claim.scope, claim.key)
      .catch((error: unknown) =>
        logger.warn("Idempotency key release failed", {
          request_id: request.context.svc.requestId,
          error_name: error instanceof Error ? error.name : "unknown",
        }),
      );
  };

  return {
    before: async (request) => {
      const state = request.context.svc;
      const route = state.route;
      const key = header(request.event, "svc-idempotency-key");
      if (!route || key === undefined || route.idempotent === false || !IDEMPOTENT_METHODS.has(route.method))
        return;
      if (!KEY_PATTERN.test(key))
        throw validationError("SVC-IDEMPOTENCY-KEY must be 1 to 255 visible ASCII characters.");
      const owner = sealOwnerOf(state.principal);
      const { sealer, idempotency: store } = ports();
      const signature = await signatureOf(sealer, request, owner);
      const scope = scopeOf(state.principal, signature);
      const claim = await store.claim(
        scope,
        key,
        `${signature.request}.${signature.body}.${signature.headers}`,
      );
      if (claim.outcome === "in-flight")
        throw conflict("A request with this idempotency key is still being processed.");
      if (claim.outcome === "completed") {
        const [storedRequest, storedBody, storedHeaders] = claim.requestSignature.split(".");
        if (storedRequest !== signature.request)
          throw conflict("This idempotency key was used for a different request.");
        if (storedBody !== signature.body) throw mismatch("request body");
        if (storedHeaders !== signature.headers) throw mismatch("SVC-TRANSACTION-ID");
        const { sealed_body: sealed } = claim.response;
        const body =
          sealed === undefined ? undefined : await sealer.open(bindingOf(owner, scope, key), sealed);
        return {
          statusCode: claim.response.status,
          headers: {
            ...claim.response.headers,
            [REPLAYED_HEADER]: "true",
            "svc-request-id": state.requestId,
          },
          ...(body === undefined ? {} : { body }),
        };
      }
      state.idempotency = { scope, key };
    },
    after: async (request) => {
      const claim = request.context.svc.idempotency;
      const response = request.response;
      if (!claim || !response) return;
      const status = response.statusCode ?? 200;
      if (status < 200 || status >= 300) return release(request);
      const contentType = response.headers?.["content-type"];
      const owner = sealOwnerOf(request.context.svc.principal);
      const { sealer, idempotency: store } = ports();
      const sealed =
        typeof response.body === "string"
          ? await sealer.seal(bindingOf(owner, claim.scope, claim.key), response.body)
          : undefined;
      await store.complete(claim.scope, claim.key, {
        status,
        ...(sealed === undefined ? {} : { sealed_body: sealed }),
        headers: contentType ? { "content-type": String(contentType) } : {},
      });
      request.context.svc.idempotency = undefined;
    },
    onError: release,
  };
}
