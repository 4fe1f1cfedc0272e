import { randomUUID } from "node:crypto";
import { normalizeContainer, type Transform } from "#shared/domain/access-rules.ts";
import { recordTokenReads, tokenEvent } from "#shared/domain/audit-entry.ts";
import type { TenantPrincipal } from "#shared/domain/entities.ts";
import { conflict, notFound, validationError } from "#shared/domain/errors.ts";
import { countTokens } from "#shared/observability/count-tokens.ts";
import { METRIC } from "#shared/observability/metric-names.ts";
import { earlierDuplicate, earlierFingerprints } from "../keys/dual-lookup.ts";
import { holdTokens, releaseStaleHold } from "../transactions.ts";
import { accessOf, intersect, requireAccess, type TokenAccess, weaker } from "./access.ts";
import type { TokenDeps } from "./deps.ts";
import { parseExpiresAt } from "./expiry.ts";
import {
  checkExpression,
  checkFingerprintExpression,
  checkMask,
  renderField,
  renderMask,
} from "./expression-checks.ts";
import { hasMask, present } from "./presenting.ts";
import { fingerprintOf, openData, sealData, splitCvc } from "./sealing.ts";
import { searchHashesOf } from "./search-hash.ts";
import { isLive, type StoredToken, type TransactionContext } from "./token.ts";
import { dataErrors, type TokenType, typeSpec } from "./types.ts";

export interface CreateTokenInput {
  id?: string;
  type: TokenType;
  data: unknown;
  mask?: unknown;
  containers?: string[];
  metadata?: Record<string, string>;
  search_indexes?: string[];
  fingerprint_expression?: string;
  deduplicate_token?: boolean;
  expires_at?: string;
}

export const DUPLICATE_NOT_READABLE =
  "A token with the same fingerprint exists, and the key may not read it (token:read on its container).";

/** Ids in paths and keys: at most this many bytes of UTF-8 (schemas/common.ts idString too). */
export const MAX_ID_BYTES = 900;

/** Literal ids: 3–400 characters, none of the characters that would make them ambiguous in paths and keys. */
const FORBIDDEN_ID_CHARS = /[#/\\+?[\]|&=%<>{}^\s\p{Cc}]/u;

export function idError(id: string): string | undefined {
  if (id.length < 3 || id.length > 400) return "must be 3 to 400 characters";
  // The id is part of sort keys (the listing index, the sweep index), which DynamoDB caps at 1,024 bytes.
  if (Buffer.byteLength(id) > MAX_ID_BYTES) return `must be at most ${MAX_ID_BYTES} bytes of UTF-8`;
  if (FORBIDDEN_ID_CHARS.test(id))
    return "must not contain whitespace, control characters or any of # / \\ + ? [ ] | & = % < > { } ^";
  return undefined;
}

export function containerOf(type: TokenType, containers: string[] | undefined): string {
  if (!containers?.[0]) return typeSpec(type).container;
  const container = normalizeContainer(containers[0]);
  if (!container)
    throw validationError("The container is invalid.", {
      containers: ["must start and end with / and hold segments of [a-z0-9_-]"],
    });
  return container;
}

export function expiryOf(deps: TokenDeps, expiresAt: string | undefined): string | undefined {
  if (expiresAt === undefined) return undefined;
  const at = parseExpiresAt(expiresAt);
  if (!at)
    throw validationError("expires_at is not a date the service reads.", {
      expires_at: ["use ISO 8601, M/D/YYYY h:mm:ss AM|PM +HH:MM, or M/D/YYYY"],
    });
  if (at.getTime() <= deps.clock.now().getTime())
    throw validationError("expires_at must be in the future.", { expires_at: ["must be in the future"] });
  return at.toISOString();
}

async function tokenIdOf(
  deps: TokenDeps,
  requested: string | undefined,
  type: TokenType,
  data: unknown,
): Promise<string> {
  if (requested === undefined) return randomUUID();
  // Rendered without a card's cvc, as its fingerprint and search indexes are: an id outlives the cvc's hour.
  const id = requested.includes("{{")
    ? await renderField(deps, "id", requested, splitCvc(type, data).rest)
    : requested;
  const problem = idError(id);
  if (problem) throw validationError("The token id is invalid.", { id: [problem] });
  return id;
}

/** A create checked and built, not yet written: the token, who may see what of it, and its deduplication. */
export interface PreparedCreate {
  token: StoredToken;
  /** How the answer shows the new token: the rule that granted token:create (and the viewer's token:read). */
  transform: Transform;
  /** Whose token:read decides what a deduplicated answer shows. */
  access: TokenAccess;
  deduplicate: boolean;
  /** The data as the caller gave it (the answer shows it without opening the sealed copy). */
  data: unknown;
  /** The mask rendered on that data (checked before any write), when the token has one. */
  masked?: { value: unknown };
  /** A deduplicating create's fingerprints under earlier live HMAC versions (keys/dual-lookup.ts). */
  earlierFingerprints?: string[];
}

/**
 * Checks a create and builds its token, writing nothing: the data against its type, the container, expiry,
 * mask and expressions, token:create on the container, then the sealed data, fingerprint and search hashes.
 * `viewer`: whoever the answer goes to when that is not the principal (a reactor's caller, for tokens its
 * formula created with the reactor's application): the answer then shows no more than the viewer's token:read
 * would, and deduplication hands back only a token both may read.
 */
export async function prepareCreate(
  deps: TokenDeps,
  principal: TenantPrincipal,
  input: CreateTokenInput,
  viewer?: TokenAccess,
): Promise<PreparedCreate> {
  const spec = typeSpec(input.type);
  const container = containerOf(input.type, input.containers);
  const errors = dataErrors(input.type, input.data);
  if (errors.size > 0) throw errors.error(`The data is not a valid ${input.type}.`);
  const expires_at = expiryOf(deps, input.expires_at);
  // A type's own mask and fingerprint are the vault's, valid by construction (test/unit/token-types.test.ts):
  // only a caller's are checked.
  const mask = input.mask === undefined ? spec.mask : input.mask;
  if (input.mask !== undefined) await checkMask(deps, mask);
  const fingerprint_expression = input.fingerprint_expression ?? spec.fingerprint;
  if (input.fingerprint_expression !== undefined)
    await checkFingerprintExpression(deps, fingerprint_expression);
  for (const [i, expression] of (input.search_indexes ?? []).entries())
    await checkExpression(deps, `search_indexes.${i}`, expression);

  const id = await tokenIdOf(deps, input.id, input.type, input.data);
  const own = accessOf(principal);
  // The answer shows what the rule that granted token:create allows (docs/tokens.md, "Access"), and the viewer's.
  const created = requireAccess(own, { id, container }, "token:create");
  const transform = viewer
    ? weaker(created, viewer.evaluate({ id, container }, "token:read") ?? "redact")
    : created;
  const access = viewer ? intersect(own, viewer) : own;

  // The mask must render on the data it is stored with (else every masked read of the token would fail).
  const masked = hasMask(mask) ? { value: await renderMask(deps, mask, input.data) } : undefined;
  // The fingerprint ignores the cvc, which is deleted after an hour.
  const fingerprintInput = await renderField(
    deps,
    "fingerprint_expression",
    fingerprint_expression,
    splitCvc(input.type, input.data).rest,
  );
  const now = deps.clock.now();
  // Built field by field in the item's key order, with no temporary objects to spread: every create passes here.
  const sealed = await sealData(deps, principal.tenantId, id, input.type, input.data);
  const token = { id, tenant_id: principal.tenantId, type: input.type, container } as StoredToken;
  token.sealed_data = sealed.sealed_data;
  if (sealed.sealed_cvc !== undefined) {
    token.sealed_cvc = sealed.sealed_cvc;
    token.cvc_expires_at = sealed.cvc_expires_at;
  }
  if (mask !== undefined) token.mask = mask;
  if (input.metadata) token.metadata = input.metadata;
  if (input.search_indexes?.length) {
    token.search_indexes = input.search_indexes;
    // Keyed hashes of the search index values: searchable by equality, never stored in the clear.
    token.search_hashes = await searchHashesOf(
      deps,
      { tenantId: principal.tenantId, type: input.type, indexes: input.search_indexes, data: input.data },
      (field, expression, data) => renderField(deps, field, expression, data),
    );
  }
  token.fingerprint = await fingerprintOf(
    deps,
    principal.tenantId,
    input.type,
    fingerprint_expression,
    fingerprintInput,
  );
  token.fingerprint_expression = fingerprint_expression;
  if (input.deduplicate_token !== undefined) token.deduplicate_token = input.deduplicate_token;
  if (expires_at) token.expires_at = expires_at;
  token.created_by = principal.application.id;
  token.created_at = now.toISOString();
  token.version = 1;
  // Deduplication hands back an existing token, which a key that may not read tokens where it creates them could
  // never be shown: for such a key (a public key in a browser) a deduplicating create is a plain one. Else its
  // 409 against 201 told whether a guessed value was stored (a page's script guessed a cvc typed into Elements).
  const deduplicate = input.deduplicate_token === true && access.evaluate(token, "token:read") !== undefined;
  const earlier = deduplicate
    ? await earlierFingerprints(
        deps,
        principal.tenantId,
        input.type,
        fingerprint_expression,
        fingerprintInput,
      )
    : [];
  return {
    token,
    transform,
    access,
    deduplicate,
    data: input.data,
    ...(masked ? { masked } : {}),
    ...(earlier.length ? { earlierFingerprints: earlier } : {}),
  };
}

/**
 * The live token a deduplicating create found, as `access` reads it, with its read entry written first; 409
 * when it is changing or expiring, or when the caller may not read it (others learn no id or data).
 */
export async function presentDuplicate(
  deps: TokenDeps,
  principal: TenantPrincipal,
  access: TokenAccess,
  tokenId: string,
) {
  const existing = await deps.tokens.get(principal.tenantId, tokenId);
  // Deleted meanwhile, expired, or pending in another caller's transaction: nothing to hand back (yet).
  if (!existing || !isLive(existing, deps.clock.now()))
    throw conflict("A token with the same fingerprint is changing or expiring; retry later.");
  const readAs = access.evaluate(existing, "token:read");
  if (!readAs) throw conflict(DUPLICATE_NOT_READABLE);
  await recordTokenReads(deps, principal, [existing], "Existing token returned by deduplication");
  return present(deps, existing, readAs, () => openData(deps, existing), { failOnMaskError: true });
}

/** Creates a token as `principal` (see prepareCreate for `viewer`), or joins it to an open transaction. */
export async function createToken(
  deps: TokenDeps,
  principal: TenantPrincipal,
  input: CreateTokenInput,
  transaction?: TransactionContext,
  viewer?: TokenAccess,
) {
  const prepared = await prepareCreate(deps, principal, input, viewer);
  const { token, access, deduplicate } = prepared;
  // A pending create holds its id against every other create until the transaction ends, unseen and undeletable:
  // a chosen id (the back end's order number) is held only by a key that could delete the token itself, as
  // holdTokens asks of updates and deletes (a public key's uncommitted create squatted the id: idempotency review,
  // 28 Nov 2026). A generated id is no one else's to want.
  if (input.id !== undefined) holdTokens(accessOf(principal), [token], transaction);
  // During a rewrap the value may be fingerprinted under an earlier HMAC version only.
  const earlier = await earlierDuplicate(deps, principal.tenantId, token.type, prepared.earlierFingerprints);
  if (earlier) return presentDuplicate(deps, principal, access, earlier);
  const write = () => {
    const entry = tokenEvent(
      deps,
      principal,
      token,
      "create",
      transaction ? `Token creation pending in transaction ${transaction.id}` : "Token created",
    );
    // At the token's own created_at: a replay whose answer was lost tells this token by it from one made later
    // under the same id (replay.ts presentCreated). Set on the new entry, not spread into a copy of it.
    entry.created_at = token.created_at;
    return deps.tokens.create(
      token,
      { deduplicate, idGiven: input.id !== undefined, now: deps.clock.now(), transaction },
      entry,
    );
  };
  let outcome = await write();
  // A chosen id held by another transaction's pending create whose key was revoked since, or whose application
  // lost token:delete there, is held no longer: that transaction rolls back, as for a held update or delete, and
  // the create goes on (its hold kept the back end's own id for the hour: review round 11).
  if (outcome.outcome === "id-taken" && input.id !== undefined && (await releasedChosenId(deps, token)))
    outcome = await write();
  if (outcome.outcome === "id-taken") throw conflict("A token with this id already exists.");
  if (outcome.outcome === "transaction-closed") throw notFound("The transaction");
  // Handed back only to a caller who may read it, as a read would show it.
  if (outcome.outcome === "duplicate") return presentDuplicate(deps, principal, access, outcome.tokenId);
  // In a transaction the token exists only once it commits: counted then (domain/transactions.ts).
  if (!transaction) countTokens(deps, METRIC.tokensCreated, principal.tenantId);
  return presentNew(deps, prepared);
}

/**
 * Whether the id `token` is created under was held by another transaction's pending create that holds it no
 * longer (releaseStaleHold: its key revoked, or its application without token:delete there), now released: the
 * create writes again. Every create under a chosen id that meets one asks (POST /tokens, POST /tokenize, a
 * reactor's tokenize block).
 */
export async function releasedChosenId(deps: TokenDeps, token: { tenant_id: string; id: string }) {
  const held = await deps.tokens.get(token.tenant_id, token.id);
  return held?.lock?.operation === "create" && (await releaseStaleHold(deps, held));
}

/** A new token as its create answers it: the create's transform, on the data and mask rendering it was given. */
export function presentNew(deps: TokenDeps, prepared: PreparedCreate) {
  const { token, transform, data, masked } = prepared;
  return present(deps, token, transform, async () => data, {
    ...(masked ? { masked } : {}),
    failOnMaskError: true,
  });
}
