import { createHash } from "node:crypto";
import type { AnswerSealing } from "#shared/domain/crypto/answer-sealer.ts";
import type { Principal } from "#shared/domain/entities.ts";
import { conflict, validationError } from "#shared/domain/errors.ts";
import { grantVersionOf } from "#shared/domain/grant-version.ts";
import {
  type DataRead,
  effectsStand,
  type IdempotencyClaimRef,
  type PresentedTokenRef,
} from "#shared/domain/idempotency-scope.ts";
import { isAnswerKeyId, sealedKeyIdOf } from "#shared/domain/keys/key-refs.ts";
import { logger } from "#shared/logger.ts";
import { type IdempotencyStore, MAX_KEPT_ANSWER_CHARS, type RecordedEffect } from "#shared/ports/stores.ts";
import { HttpError } from "../errors.ts";
import { fromReplayBody, type ReplayBody } from "../replay-body.ts";
import {
  type HttpResult,
  header,
  type MatchedRoute,
  type SvcMiddleware,
  type SvcRequest,
} from "../request-state.ts";
import { honoursIdempotencyKey } from "../route.ts";

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
  /** The exact body bytes: part of the scope of anonymous callers only (a replay ignores the body otherwise). */
  body: string;
  /** The SIGNED_HEADERS, present or absent. */
  headers: string;
}

/**
 * What a replay must match: method, path and query, and the signed headers; the body only for anonymous callers
 * (their scope). Keyed hashes (HMAC under the seal owner's fingerprint key): a plain SHA-256 of a body holding a
 * card number would let anyone with the table (or a backup) test guesses offline.
 */
async function signatureOf(sealer: AnswerSealing, request: SvcRequest, owner: string): Promise<Signature> {
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
 * same secret code) can ever be answered from a stored result. A public key is a credential shared by design (every
 * browser of the merchant holds it), so it does not tell its callers apart: its scope is the whole request too
 * (only the same body, for a card the card itself, gets the stored answer).
 */
function scopeOf(principal: Principal | undefined, signature: Signature) {
  const wholeRequest = sha256(`${signature.request}\n${signature.body}\n${signature.headers}`);
  if (!principal) return `anonymous:${wholeRequest}`;
  if (principal.kind === "root") return "root";
  const credential =
    principal.kind === "session"
      ? `tenant:${principal.tenantId}:session:${principal.session.id}`
      : `tenant:${principal.tenantId}:key:${principal.keyId}`;
  const scope = `${credential}:grant:${grantVersionOf(principal)}`;
  return sharedByDesign(principal) ? `${scope}:request:${wholeRequest}` : scope;
}

/** A public application's key: in every browser of the merchant, so one caller's answer is not another's. */
const sharedByDesign = (principal: Principal) =>
  principal.kind === "application" && principal.application.type === "public";

const sealOwnerOf = (principal: Principal | undefined) =>
  principal && principal.kind !== "root" ? principal.tenantId : DEPLOYMENT_SEAL_OWNER;

/** The ciphertext is bound to its record: a sealed body copied to another key or scope does not open. */
const bindingOf = (owner: string, scope: string, key: string) => ({
  tenantId: owner,
  tokenId: `idempotency:${sha256(`${scope}\n${key}`)}`,
  field: "response_body",
});

const mismatch = (what: "method or path" | "SVC-TRANSACTION-ID") =>
  new HttpError(
    422,
    "idempotency-key-mismatch",
    "Unprocessable Content",
    `This idempotency key was used with a different ${what}.`,
  );

/** The stored signature: request and signed headers (records written before the body stopped counting hold it too). */
function parseStoredSignature(stored: string): { request?: string; headers?: string } {
  const parts = stored.split(".");
  return parts.length === 3
    ? { request: parts[0], headers: parts[2] }
    : { request: parts[0], headers: parts[1] };
}

export interface IdempotencyPorts {
  idempotency: IdempotencyStore;
  /** Keys the request signatures and seals the stored answers, under the tenant's data keys… */
  sealer: AnswerSealing;
  /** …or under its answer keys, in a group that never opens token data (GROUP_DATA_KEYS `answers`). */
  answerSealer: AnswerSealing;
}

/**
 * How a function group answers what idempotency cannot answer from a stored result (createHttpHandler provides
 * it from the group's handlers): a token an answer presented, presented again for the same caller, and the answer
 * to a request that took effect but never completed (it died, or failed, after its write).
 */
export interface IdempotencyReplays {
  presentToken(request: SvcRequest, ref: PresentedTokenRef): Promise<unknown>;
  /** Throws (404, 409) unless the data an answer was computed from is still alive and unchanged. */
  checkRead(request: SvcRequest, read: DataRead): Promise<void>;
  replayEffect(request: SvcRequest, effects: RecordedEffect[]): Promise<HttpResult>;
}

const ANSWER_NOT_KEPT =
  "This request took effect, and its answer was too large to keep for a retry; it is not run again.";

const ANSWER_SEALED_BEFORE =
  "This request took effect before an upgrade, and its answer cannot be replayed; it is not run again.";

const replayed = (result: HttpResult, requestId: string): HttpResult => ({
  ...result,
  headers: { ...result.headers, [REPLAYED_HEADER]: "true", "svc-request-id": requestId },
});

/**
 * SVC-IDEMPOTENCY-KEY on POST, PUT and PATCH (docs/security.md, the idempotency rows): a conditional
 * write takes an in-flight marker (a racing duplicate gets 409); each write transaction of the request records
 * its effect on that marker in the same transaction (domain/idempotency-scope.ts), so a retry after any crash
 * replays the effect instead of running again; a 2xx result is stored for 24 h, its body sealed with the caller's
 * tenant data key (its answer key in groups that never open token data: `keys`), every token it presented kept
 * as a reference and presented again on replay (nothing stored outlives the data); replays go with
 * SVC-IDEMPOTENT-REPLAYED: true to the same credential and grant for the same method and path, whatever the body;
 * a failure without effect releases the key so a retry runs as new.
 */
export function idempotency(
  ports: () => IdempotencyPorts,
  replays: IdempotencyReplays,
  keys: "data" | "answers",
): SvcMiddleware {
  const sealerOf = (p: IdempotencyPorts) => (keys === "answers" ? p.answerSealer : p.sealer);
  // Each phase answers at once (no promise) for a request without a claim: nearly every request.
  const release = (request: SvcRequest) => {
    const claim = request.context.svc?.idempotency;
    if (!claim) return;
    return releaseClaim(request, claim);
  };
  const releaseClaim = async (request: SvcRequest, claim: IdempotencyClaimRef) => {
    request.context.svc.idempotency = undefined;
    await ports()
      .idempotency.release(
        claim.scope,
        claim.key,
        claim.claimId,
        effectsStand(claim.effects),
        claim.effects.length,
      )
      .catch((error: unknown) =>
        logger.warn("Idempotency key release failed", {
          request_id: request.context.svc.requestId,
          error_name: error instanceof Error ? error.name : "unknown",
        }),
      );
  };

  const claimOrReplay = async (request: SvcRequest, route: MatchedRoute, sent: string) => {
    const state = request.context.svc;
    if (!KEY_PATTERN.test(sent))
      throw validationError("SVC-IDEMPOTENCY-KEY must be 1 to 255 visible ASCII characters.");
    // A new credential (a session key) is never kept for replay to a shared key: the request runs afresh.
    if (route.answersCredential && state.principal && sharedByDesign(state.principal)) return;
    const owner = sealOwnerOf(state.principal);
    const composed = ports();
    const store = composed.idempotency;
    const sealer = sealerOf(composed);
    const signature = await signatureOf(sealer, request, owner);
    // Kept as a keyed digest, never as sent: a caller may build its keys from what it sends (an order or a
    // card number); the fingerprint key never rotates, so a retry after a rotation finds its record.
    let key = await sealer.fingerprint(owner, "svc-idempotency-key", sent);
    const scope = scopeOf(state.principal, signature);
    let claim = await store.claim(scope, key, `${signature.request}.${signature.headers}`);
    // A retry across the upgrade to keyed digests: its first run's record is under the key as sent. Only what
    // it holds is answered from it (a result, an effect, a request still running); nothing new is ever kept
    // under the key as sent: a legacy key that turns out free (its record just lapsed) is let go at once.
    if (claim.outcome === "claimed" && key !== sent && (await store.hasLegacyRecord(scope, sent))) {
      const legacy = await store.claim(scope, sent, `${signature.request}.${signature.headers}`);
      if (legacy.outcome === "claimed") await store.release(scope, sent, legacy.claimId, false, 0);
      else {
        await store.release(scope, key, claim.claimId, false, 0);
        key = sent;
        claim = legacy;
      }
    }
    // A retry a second later finds the answer (replayed) or the same 409: say when, as 429 and 503 do.
    if (claim.outcome === "in-flight")
      throw conflict("A request with this idempotency key is still being processed.", {
        retryAfterSeconds: 1,
      });
    if (claim.outcome === "claimed") {
      state.idempotency = { scope, key, claimId: claim.claimId, effects: [] };
      return;
    }
    // The same key, method and path replays whatever the body (spec); another method or path never does.
    const stored = parseStoredSignature(claim.requestSignature);
    if (stored.request !== signature.request) throw mismatch("method or path");
    if (stored.headers !== signature.headers) throw mismatch("SVC-TRANSACTION-ID");
    if (claim.outcome === "effected")
      return replayed(await replays.replayEffect(request, claim.effects), state.requestId);
    const { sealed_body: sealed, form } = claim.response;
    if (form === "unkept") throw conflict(ANSWER_NOT_KEPT);
    // A record kept under the key as sent (before 27 Nov 2026), its answer sealed under a data key, which this group
    // no longer holds (answer keys only since 28 Nov 2026): it cannot be opened here. (A record under the data
    // keys' digest is not found at all: the retry runs again, docs/security.md, answer keys.)
    if (keys === "answers" && sealed !== undefined && !isAnswerKeyId(sealedKeyIdOf(sealed) ?? ""))
      throw conflict(ANSWER_SEALED_BEFORE);
    const opened = sealed === undefined ? undefined : await sealer.open(bindingOf(owner, scope, key), sealed);
    const body =
      opened !== undefined && form === "presented"
        ? JSON.stringify(
            await fromReplayBody(
              JSON.parse(opened) as ReplayBody,
              (ref) => replays.presentToken(request, ref),
              (read) => replays.checkRead(request, read),
              state.route?.replayEachToken === true,
            ),
          )
        : opened;
    return replayed(
      {
        statusCode: claim.response.status,
        headers: { ...claim.response.headers },
        ...(body === undefined ? {} : { body }),
      },
      state.requestId,
    );
  };
  const complete = async (request: SvcRequest, claim: IdempotencyClaimRef, response: HttpResult) => {
    const state = request.context.svc;
    const status = response.statusCode ?? 200;
    if (status < 200 || status >= 300) return release(request);
    const contentType = response.headers?.["content-type"];
    const owner = sealOwnerOf(state.principal);
    const composed = ports();
    const store = composed.idempotency;
    const sealer = sealerOf(composed);
    // An answer that presented tokens is stored without them (references only): see replay-body.ts.
    const kept = state.replayBody ?? response.body;
    const sealed =
      typeof kept === "string"
        ? await sealer.seal(bindingOf(owner, claim.scope, claim.key), kept)
        : undefined;
    // Too long to keep: this answer goes out as it is, and the record says so; a retry answers 409 and runs
    // nothing again (a run's outbound calls record no effect, so releasing the key would run them twice).
    if (sealed !== undefined && sealed.length > MAX_KEPT_ANSWER_CHARS) {
      await store.complete(claim.scope, claim.key, claim.claimId, { status, form: "unkept", headers: {} });
      state.idempotency = undefined;
      return;
    }
    await store.complete(claim.scope, claim.key, claim.claimId, {
      status,
      ...(sealed === undefined ? {} : { sealed_body: sealed }),
      ...(state.replayBody !== undefined ? { form: "presented" as const } : {}),
      headers: contentType ? { "content-type": String(contentType) } : {},
    });
    state.idempotency = undefined;
  };

  return {
    before: (request) => {
      const route = request.context.svc.route;
      const sent = header(request.event, "svc-idempotency-key");
      if (!route || sent === undefined || !honoursIdempotencyKey(route)) return;
      return claimOrReplay(request, route, sent);
    },
    after: (request) => {
      const claim = request.context.svc.idempotency;
      const response = request.response;
      if (!claim || !response) return;
      return complete(request, claim, response);
    },
    onError: release,
  };
}
