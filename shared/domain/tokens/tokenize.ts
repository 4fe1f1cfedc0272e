import type { Transform } from "#shared/domain/access-rules.ts";
import { requireAnswerFits } from "#shared/domain/answer-size.ts";
import { recordTokenReads, tokenEvent } from "#shared/domain/audit-entry.ts";
import type { TenantPrincipal } from "#shared/domain/entities.ts";
import { conflict, DomainError, validationError } from "#shared/domain/errors.ts";
import { FieldErrorList, fieldKey } from "#shared/domain/field-errors.ts";
import { outsideAnyRequest } from "#shared/domain/idempotency-scope.ts";
import { earlierDuplicate } from "#shared/domain/keys/dual-lookup.ts";
import { isPlainObject } from "#shared/domain/merge-patch.ts";
import { commitBatch, openBatch, rollbackBatch, type TransactionDeps } from "#shared/domain/transactions.ts";
import { logger } from "#shared/logger.ts";
import { countTokens } from "#shared/observability/count-tokens.ts";
import { METRIC } from "#shared/observability/metric-names.ts";
import type { StagedCreate } from "#shared/ports/stores.ts";
import { createTokenBody } from "#shared/schemas/tokens.ts";
import type { TokenAccess } from "./access.ts";
import {
  type CreateTokenInput,
  DUPLICATE_NOT_READABLE,
  type PreparedCreate,
  prepareCreate,
  presentDuplicate,
  presentNew,
  releasedChosenId,
} from "./create.ts";
import type { TokenDeps } from "./deps.ts";
import type { TokenView } from "./presenting.ts";

/**
 * Token requests per POST /tokenize. Chosen so one call stays well inside a function's time and API Gateway's
 * 29 s: up to 6 writes per token (token, claim, two sweep entries, operation, audit entry) make about 16 staging
 * writes of 99 items, plus the commit and its roll-forward, and the 1 MiB body holds 250 card requests many
 * times over. The hosted vault's SDK sends whatever its caller batches; importers send 25–250.
 */
export const MAX_TOKENIZE = 250;
/** How deep arrays and objects of token requests may nest. */
export const MAX_TOKENIZE_DEPTH = 16;

export type TokenizeDeps = TokenDeps & TransactionDeps;

/**
 * The body's shape, with each token request replaced by its index among the requests. A bare value (a string,
 * number or boolean where a request could stand) is tokenized as `{type: "token", data: value}` and answered as
 * its id alone, as the hosted vault does (its SDK's tests send `{first_name: "John"}`); `null` stays `null`.
 */
type Shape =
  | { request: number }
  | { bare: number }
  | { array: Shape[] }
  | { object: [string, Shape][] }
  | { none: null };

/** A token request: an object with a string `type` and a `data` (the hosted vault's rule). */
const isTokenRequest = (value: unknown): value is Record<string, unknown> =>
  isPlainObject(value) && typeof value.type === "string" && "data" in value;

// Each key cut as a problem names it (fieldKey): the walk builds a path for every request and value it meets.
const join = (path: string, key: string | number) => (path ? `${path}.${fieldKey(key)}` : fieldKey(key));
const at = (path: string) => (path ? `the token request at ${path}` : "the token request");

interface Parsed {
  shape: Shape;
  requests: { path: string; input: CreateTokenInput }[];
}

/** The token requests in the body, each checked against POST /tokens's body (errors named by their path). */
function parseBody(body: unknown): Parsed {
  const requests: Parsed["requests"] = [];
  const errors = new FieldErrorList();
  const walk = (value: unknown, path: string, depth: number): Shape => {
    if (depth > MAX_TOKENIZE_DEPTH)
      throw validationError(`Token requests nest at most ${MAX_TOKENIZE_DEPTH} levels deep.`);
    const bare = typeof value === "string" || typeof value === "number" || typeof value === "boolean";
    if (isTokenRequest(value) || bare) {
      if (requests.length >= MAX_TOKENIZE)
        throw validationError(`At most ${MAX_TOKENIZE} token requests per call.`, {
          body: [`at most ${MAX_TOKENIZE} token requests`],
        });
      const parsed = createTokenBody.safeParse(bare ? { type: "token", data: value } : value);
      if (parsed.success) requests.push({ path, input: parsed.data });
      else {
        requests.push({ path, input: value as unknown as CreateTokenInput });
        errors.addIssues(parsed.error.issues, path);
      }
      return bare ? { bare: requests.length - 1 } : { request: requests.length - 1 };
    }
    if (value === null) return { none: null };
    if (Array.isArray(value)) return { array: value.map((item, i) => walk(item, join(path, i), depth + 1)) };
    if (isPlainObject(value))
      return { object: Object.entries(value).map(([k, v]) => [k, walk(v, join(path, k), depth + 1)]) };
    errors.addNamed(
      path || "body",
      "must be a token request (type and data), a value, or an array or object of them",
    );
    return { array: [] };
  };
  const shape = walk(body, "", 0);
  if (errors.size > 0) throw errors.error("A token request is invalid.");
  return { shape, requests };
}

function rebuild(shape: Shape, answers: TokenView[]): unknown {
  if ("request" in shape) return answers[shape.request];
  if ("bare" in shape) return answers[shape.bare]?.id;
  if ("none" in shape) return null;
  if ("array" in shape) return shape.array.map((item) => rebuild(item, answers));
  return Object.fromEntries(shape.object.map(([key, item]) => [key, rebuild(item, answers)]));
}

/** A request's failure, named by its path (the detail never holds data). */
function atPath(error: unknown, path: string): unknown {
  if (!(error instanceof DomainError) || !path) return error;
  const errors = error.errors
    ? Object.fromEntries(
        Object.entries(error.errors).map(([field, messages]) => [`${path}.${field}`, messages]),
      )
    : undefined;
  return new DomainError(error.kind, `${error.detail} (${at(path)})`, {
    ...error.options(),
    ...(errors ? { errors } : {}),
  });
}

const claimKey = (token: PreparedCreate["token"]) => `${token.type}\n${token.fingerprint}`;

/**
 * POST /tokenize: creates every token request of the body (one, an array, an object of them, nested), all or
 * nothing, and answers the same shape with each request replaced by its token as POST /tokens answers it.
 * Every request is checked (and token:create on its container) before anything is written; the tokens are then
 * written in one TransactWriteItems when they fit, else staged pending in a batch transaction and committed at
 * once, so a failure at any point stores none of them.
 */
export async function tokenize(deps: TokenizeDeps, principal: TenantPrincipal, body: unknown) {
  return (await tokenizeBatch(deps, principal, body)).answer;
}

/** How a batch made for someone else's answer (a reactor's tokenize block) is answered. */
export interface BatchAnswer {
  /** Whose access the tokens are answered with, besides the creator's (see prepareCreate). */
  viewer?: TokenAccess;
  /** The whole answer the batch's answer goes into (a reaction's, beside its `raw`): its size is checked. */
  within?: (answer: unknown) => unknown;
  /**
   * Refuses a whole answer too large for where it goes, before the commit: by default what a Lambda result
   * carries; a kept answer (a queued reaction's outcome) holds less.
   */
  requireFits?: (answer: unknown, detail: string, views: readonly TokenView[]) => void;
  /**
   * Runs before the commit with each token as answered (once per token, however many rounds the write takes):
   * what it writes (the viewer's read entries) is written whether or not the commit then succeeds, and its
   * failure stores nothing.
   */
  beforeCommit?: (views: TokenView[]) => Promise<void>;
}

/**
 * A batch as `tokenize` makes it, created as `principal`; also each token as answered, for what the caller logs
 * of them. `answering` serves a batch answered as part of another answer.
 */
export async function tokenizeBatch(
  deps: TokenizeDeps,
  principal: TenantPrincipal,
  body: unknown,
  answering: BatchAnswer = {},
): Promise<{ answer: unknown; views: TokenView[] }> {
  const { viewer } = answering;
  const { shape, requests } = parseBody(body);
  const prepared: PreparedCreate[] = [];
  for (const { path, input } of requests) {
    try {
      prepared.push(await prepareCreate(deps, principal, input, viewer));
    } catch (error) {
      throw atPath(error, path);
    }
  }
  const pathOf = (index: number) => requests[index]?.path ?? "";

  // Within the batch: one id per token, and a deduplicating request whose value an earlier request gives
  // answers that request's token.
  const ids = new Map<string, number>();
  const claims = new Map<string, number>();
  const sameAs = new Map<number, number>();
  for (const [index, { token, deduplicate }] of prepared.entries()) {
    const earlier = ids.get(token.id);
    if (earlier !== undefined)
      throw validationError("Two token requests name the same id.", {
        [pathOf(index) || "body"]: [`names the id of ${at(pathOf(earlier))}`],
      });
    ids.set(token.id, index);
    const key = claimKey(token);
    const first = claims.get(key);
    if (deduplicate && first !== undefined) sameAs.set(index, first);
    else if (!claims.has(key)) claims.set(key, index);
  }
  // How each such request's caller reads the earlier request's token.
  const readAs = new Map<number, Transform>();
  for (const [index, first] of sameAs) {
    const original = prepared[first] as PreparedCreate;
    const transform = (prepared[index] as PreparedCreate).access.evaluate(original.token, "token:read");
    if (!transform) throw atPath(conflict(DUPLICATE_NOT_READABLE), pathOf(index));
    readAs.set(index, transform);
  }

  // The answers of requests deduplicated to a stored token, built before the commit: past it nothing may fail
  // the call (a mask that no longer renders on the stored data, a duplicate deleted or locked meanwhile), or a
  // batch answered 400/409 was stored all the same and each retry stored it again (import review, 27 Nov).
  const answered = new Map<number, TokenView>();
  /** Answers `index` and the later requests of the batch that answer its token with `tokenId` (or throws). */
  const answerDuplicate = async (index: number, tokenId: string) => {
    for (const j of [index, ...[...sameAs].flatMap(([later, first]) => (first === index ? [later] : []))])
      try {
        answered.set(
          j,
          await presentDuplicate(deps, principal, (prepared[j] as PreparedCreate).access, tokenId),
        );
      } catch (error) {
        throw atPath(error, pathOf(j));
      }
  };

  // Values a rewrap has not re-fingerprinted yet: found under an earlier HMAC version, checked before any write.
  const earlier = new Map<number, string>();
  for (const [index, p] of prepared.entries()) {
    if (sameAs.has(index)) continue;
    const found = await earlierDuplicate(deps, principal.tenantId, p.token.type, p.earlierFingerprints);
    if (found === undefined) continue;
    await answerDuplicate(index, found);
    earlier.set(index, found);
  }
  const staged = prepared.flatMap((_, index) => (sameAs.has(index) || earlier.has(index) ? [] : [index]));
  // Tokens of the batch that later requests of it answer (deduplicated to them): their read entries are written
  // before the commit, once the tokens to be created are known. Written after it (until the search and bulk
  // review), a throttled entry answered 503 for a stored batch, which its client sent again and stored twice.
  const readBeforeCommit = new Set<number>();
  /** Request index → the stored token it answers, from the write's entries → token ids. */
  const duplicatesOf = (entries: Record<number, string>): Record<number, string> => ({
    ...Object.fromEntries(earlier),
    ...Object.fromEntries(
      Object.entries(entries).map(([entry, tokenId]) => [staged[Number(entry)] as number, tokenId]),
    ),
  });
  /** The batch's answer, given the requests deduplicated to stored tokens. */
  let views: TokenView[] = [];
  /** Tokens `answering.beforeCommit` was given, by id (a later round answers the same token again). */
  const given = new Set<string>();
  const answerOf = async (duplicates: Record<number, string>) => {
    const answers: TokenView[] = [];
    for (const [index, p] of prepared.entries()) {
      const first = sameAs.get(index);
      const known = answered.get(index);
      if (
        known &&
        (duplicates[index] !== undefined || (first !== undefined && duplicates[first] !== undefined))
      )
        answers.push(known);
      else if (first !== undefined) {
        // The token the earlier request of the batch created, as this request's caller may read it (its read
        // entry written before the commit: beforeCommit).
        const original = prepared[first] as PreparedCreate;
        answers.push(await presentNew(deps, { ...original, transform: readAs.get(index) as Transform }));
      } else answers.push(await presentNew(deps, p));
    }
    views = answers;
    return rebuild(shape, answers);
  };
  const write: WriteSet = {
    entries: (message) =>
      staged.map((index) => {
        const { token, deduplicate } = prepared[index] as PreparedCreate;
        return { token, deduplicate, audit: tokenEvent(deps, principal, token, "create", message) };
      }),
    // A deduplicated token the caller may not read (or whose answer fails) fails the whole batch: checked, and
    // answered, for the request and for those of the batch that answer its token.
    checkDuplicate: (entry, tokenId) => answerDuplicate(staged[entry] as number, tokenId),
    idTaken: (entry) =>
      atPath(conflict("A token with this id already exists."), pathOf(staged[entry] as number)),
    beforeCommit: async (duplicateEntries) => {
      // An answer no response could carry (each masked token up to 128 Ki characters: 20 requests of 66 KB made
      // 9.6 MB) refuses the batch here, before anything is stored: past the commit it was a 500 for a stored batch,
      // whose ids the caller never learnt and whose retry stored it again (review round 10).
      const batchAnswer = await answerOf(duplicatesOf(duplicateEntries));
      (answering.requireFits ?? requireAnswerFits)(
        answering.within ? answering.within(batchAnswer) : batchAnswer,
        "The batch's answer comes to more than one answer holds; send fewer token requests per call.",
        views,
      );
      const fresh = views.filter((view) => !given.has(view.id));
      await answering.beforeCommit?.(fresh);
      for (const view of fresh) given.add(view.id);
      const originals = [...new Set(sameAs.values())].filter((first) => {
        const entry = staged.indexOf(first);
        return entry >= 0 && duplicateEntries[entry] === undefined && !readBeforeCommit.has(first);
      });
      if (originals.length === 0) return;
      await recordTokenReads(
        deps,
        principal,
        originals.map((first) => (prepared[first] as PreparedCreate).token),
        "Existing token returned by deduplication",
      );
      for (const first of originals) readBeforeCommit.add(first);
    },
  };
  // Nothing to write (every request answered by a stored token): the answer is still checked and the caller's
  // reads logged before it leaves (skipped with writeAll, a reactor's block showed data with no read entry: stop
  // 50's review).
  const found =
    staged.length > 0
      ? await writeAll(deps, principal, write)
      : await write.beforeCommit({}).then(() => ({}));
  const duplicates = duplicatesOf(found);
  const created = staged.filter((index) => duplicates[index] === undefined);
  // Past the commit, and best effort: a throttled or dropped claim must not answer 5xx for a stored batch (its
  // client sends the batch again and stores it twice); a token left unclaimed is found by no later deduplication.
  await deps.tokens
    .claimFingerprints(
      created.flatMap((index) => {
        const p = prepared[index] as PreparedCreate;
        return p.deduplicate ? [] : [p.token];
      }),
      deps.clock.now(),
    )
    .catch((error: unknown) =>
      logger.warn("Fingerprint claims after a tokenize commit failed", {
        tenant_id: principal.tenantId,
        error_name: error instanceof Error ? error.name : "unknown",
      }),
    );
  // Past the commit: answers that cannot fail (the data is the request's own, its mask rendered before the write;
  // their size checked before the commit, beforeCommit).
  return { answer: await answerOf(duplicates), views };
}

/** The creates of a batch, as the two ways of writing them need them. */
interface WriteSet {
  entries(auditMessage: string): StagedCreate[];
  /** Throws (409) when the caller may not be handed the token a deduplicating entry found. */
  checkDuplicate(entry: number, tokenId: string): Promise<void>;
  idTaken(entry: number): unknown;
  /**
   * Runs before the write that commits, given the entries it will not create (duplicates found); what it writes
   * (read entries) is written whether or not the commit then succeeds, and its failure stores nothing.
   */
  beforeCommit(duplicates: Record<number, string>): Promise<void>;
}

const LIFETIME_PASSED = "The batch ran past its lifetime and was rolled back; nothing was stored.";

/**
 * Writes a batch's creates all or nothing, and returns the duplicates found (entry → existing token). In one
 * TransactWriteItems when they fit (as a single create writes one token: visible at once), else staged pending in
 * a batch transaction and committed at once (any failure rolls the batch back).
 */
async function writeAll(
  deps: TokenizeDeps,
  principal: TenantPrincipal,
  write: WriteSet,
): Promise<Record<number, string>> {
  const known: Record<number, string> = {};
  const direct = write.entries("Token created");
  // A few rounds: each finds the duplicates of claimed fingerprints (and checks them) before anything is written.
  for (let round = 0; round < 4; round++) {
    // The batch fits one write: nothing is written unless it commits, so this is before the commit.
    await write.beforeCommit(known);
    const outcome = await deps.tokens.createAtOnce(direct, known, deps.clock.now());
    if (outcome.outcome === "too-large") break;
    if (outcome.outcome === "id-taken") {
      if (await releasedChosenId(deps, (direct[outcome.index] as StagedCreate).token)) continue;
      throw write.idTaken(outcome.index);
    }
    if (outcome.outcome === "written") {
      // Staged batches are counted by their commit, as it applies them (commitBatch).
      countTokens(deps, METRIC.tokensCreated, principal.tenantId, direct.length - Object.keys(known).length);
      return known;
    }
    if (outcome.outcome === "transaction-closed") throw new Error("No transaction to close");
    for (const [entry, tokenId] of Object.entries(outcome.duplicates)) {
      await write.checkDuplicate(Number(entry), tokenId);
      known[Number(entry)] = tokenId;
    }
    if (round === 3) throw conflict("Token fingerprints kept changing; retry later.");
  }

  // A chosen id held by a stale pending create (releasedChosenId) is released once; the batch is staged again.
  for (let attempt = 0; ; attempt++) {
    const staged = await stageAndCommit(deps, principal, write, direct.length);
    if (!("heldId" in staged)) return staged.duplicates;
    if (attempt > 0 || !(await releasedChosenId(deps, staged.heldId))) throw write.idTaken(staged.index);
  }
}

/** Writes a batch too large for one write: staged pending in a batch transaction, then committed at once. */
async function stageAndCommit(
  deps: TokenizeDeps,
  principal: TenantPrincipal,
  write: WriteSet,
  size: number,
): Promise<{ duplicates: Record<number, string> } | { heldId: StagedCreate["token"]; index: number }> {
  // Opening, staging and rolling back take no effect (nothing of the batch is visible): they run outside the
  // request's idempotency claim, so a batch that failed or died before its commit leaves the key free for a
  // retry. The commit is the effect, recorded with the claim in its own write.
  const { record, context } = await outsideAnyRequest(() => openBatch(deps, principal, size));
  let held: { heldId: StagedCreate["token"]; index: number } | undefined;
  try {
    const entries = write.entries(`Token creation pending in batch ${record.id}`);
    const outcome = await outsideAnyRequest(() =>
      deps.tokens.stageCreates(entries, context, deps.clock.now()),
    );
    if (outcome.outcome === "id-taken") {
      held = { heldId: (entries[outcome.index] as StagedCreate).token, index: outcome.index };
      throw write.idTaken(outcome.index);
    }
    if (outcome.outcome === "transaction-closed") throw conflict(LIFETIME_PASSED);
    // Checked before the commit, while nothing of the batch is visible.
    for (const [entry, tokenId] of Object.entries(outcome.duplicates))
      await write.checkDuplicate(Number(entry), tokenId);
    await write.beforeCommit(outcome.duplicates);
    if (!(await commitBatch(deps, principal, record))) throw conflict(LIFETIME_PASSED);
    return { duplicates: outcome.duplicates };
  } catch (error) {
    await outsideAnyRequest(() => rollbackBatch(deps, principal, record));
    if (held) return held;
    throw error;
  }
}
