import { AsyncLocalStorage } from "node:async_hooks";
import type { Transform } from "./access-rules.ts";
import { DomainError } from "./errors.ts";

/** The idempotency claim a request holds while its handler runs (see shared/http/middleware/idempotency.ts). */
export interface IdempotencyClaimRef {
  /** The claim's record: scope and key as the idempotency store names them. */
  scope: string;
  key: string;
  /** Names this claim of the key: an effect commits only while the record still carries it. */
  claimId: string;
  /** The effects this request committed so far (appended as each write transaction commits). */
  effects: EffectRef[];
  /** False once the handler has answered: work it left behind (timers, queued jobs) records nothing on it. */
  open?: boolean;
  /** Tokens whose data the request handed to code or into its answer other than by presenting them. */
  reads?: DataRead[];
}

/**
 * A token whose data went into an answer through detokenization (a reactor's args, detokenizing routes): the
 * answer is only replayed while that data is still what it was, and still alive.
 */
export interface DataRead {
  id: string;
  version: number;
  /** Whether the data read included the cvc (then the answer is not replayed past the cvc's hour). */
  cvc: boolean;
  /** The token's `created_at`: a token deleted and created again under the same id is another token. */
  created?: string;
  /**
   * Data handed to code acting as an application (a reactor's `svc` reads): that application and the digest of
   * its grant then. A replay needs it unchanged (the caller's own grant is in the idempotency scope already).
   */
  actingGrant?: { applicationId: string; version: string };
}

/** An effect as its record lists it: an audit entry its write transaction wrote. */
export interface EffectRef {
  entity_type: string;
  entity_id: string;
  operation: string;
  /**
   * When its audit entry was made (the entry's `created_at`): an entity whose id its caller chose (a token's) may be
   * deleted and another made under that id later, which a replay must never answer as this effect's.
   */
  at?: string;
}

/**
 * Whether a request's committed effects still stand: not when each is the creation of something the same
 * request deleted again, or that deletion (an invitation withdrawn because its e-mail could not be sent).
 */
export function effectsStand(effects: EffectRef[]): boolean {
  const id = (e: EffectRef) => `${e.entity_type}\n${e.entity_id}`;
  const created = new Set(effects.filter((e) => e.operation === "create").map(id));
  const deleted = new Set(effects.filter((e) => e.operation === "delete").map(id));
  return effects.some(
    (e) =>
      (e.operation !== "create" && e.operation !== "delete" && e.operation !== "read") ||
      (e.operation === "create" && !deleted.has(id(e))) ||
      (e.operation === "delete" && !created.has(id(e))),
  );
}

/**
 * A token as an answer presented it. A replay presents the token again from these (never from a stored copy
 * of its data), so no replay outlives the data: a cvc past its hour, a token deleted or expired since.
 */
export interface PresentedTokenRef {
  id: string;
  transform: Transform;
  /** The version presented: a replay shows nothing of a later version (it would be news to the caller). */
  version: number;
  /** The mask the answer was rendered with (a PATCH renders with the mask stored before its change). */
  mask?: unknown;
  /** The token's `created_at`: a token deleted and created again under the same id is another token. */
  created?: string;
}

/**
 * A token an answer presented that its replay cannot present again: deleted or expired since (`gone`, 404) or at
 * another version (`changed`, 409). `stub` is all a replay of a route that answers many tokens shows of it in its
 * place (RouteSpec.replayEachToken): its id and created_at, which the first answer gave, and the mark; nothing of
 * what it holds now.
 */
export class TokenNotStanding extends DomainError {
  readonly stub: { id: string; created_at?: string; replay: "gone" | "changed" };

  constructor(ref: PresentedTokenRef, mark: "gone" | "changed") {
    super(
      mark === "gone" ? "not-found" : "conflict",
      mark === "gone"
        ? "The token this idempotent request answered was not found."
        : "The token this idempotent request answered has changed since; read it instead.",
    );
    this.stub = {
      id: ref.id,
      ...(ref.created !== undefined ? { created_at: ref.created } : {}),
      replay: mark,
    };
  }
}

interface Scope {
  claim: IdempotencyClaimRef;
  presented: WeakMap<object, PresentedTokenRef>;
}

const storage = new AsyncLocalStorage<Scope>();
/** Claims whose handler is running now, in this process (the local host serves many requests at once). */
let claimsRunning = 0;

/**
 * Runs a request's handler within its idempotency claim: every write transaction it makes records the effect
 * on the claim's record in the same transaction (shared/adapters/dynamodb/client.ts), and every token it
 * presents is noted so the stored answer holds a reference, not the data.
 *
 * When the last running claim ends, the storage is disabled. On Node 20 and 22 an enabled AsyncLocalStorage keeps
 * a promise hook on every promise of the process, for good: after one idempotent request, every later request
 * paid 3–5 times the cost of each of its promises (hundreds per request, most of them the AWS SDK's). Nothing
 * needs the storage then: a claim is only read while open, and the next claim's `run` enables it again. (Node 24's
 * AsyncContextFrame has no such hook; there this only drops the ended claim from the current context.)
 */
export async function runWithIdempotencyClaim<T>(
  claim: IdempotencyClaimRef,
  run: () => Promise<T>,
): Promise<T> {
  claim.open = true;
  claimsRunning += 1;
  try {
    return await storage.run({ claim, presented: new WeakMap() }, run);
  } finally {
    claim.open = false;
    claimsRunning -= 1;
    if (claimsRunning === 0) storage.disable();
  }
}

/** The claim of the request running now, if it has one and its handler has not answered yet. */
export function currentIdempotencyClaim(): IdempotencyClaimRef | undefined {
  const claim = storage.getStore()?.claim;
  return claim?.open ? claim : undefined;
}

/**
 * Runs `start` outside any request's claim: for what outlives the request that happens to start it (a job queue's
 * worker, a sandbox process and its message handlers), so no later work is taken for that request's effect.
 */
export const outsideAnyRequest = <T>(start: () => T): T => storage.exit(start);

/**
 * Notes that `view` presents a token (tokens/presenting.ts `present`); a no-op outside an idempotent request,
 * where `ref` is not even built (every token answer passes here).
 */
export function notePresentedToken(view: object, ref: () => PresentedTokenRef): void {
  const scope = storage.getStore();
  if (scope) scope.presented.set(view, ref());
}

/** Notes that the running request read a token's data (tokens/detokenize.ts); a no-op outside a claim. */
export function noteDataRead(read: DataRead): void {
  const claim = currentIdempotencyClaim();
  if (!claim) return;
  claim.reads ??= [];
  const acting = read.actingGrant?.applicationId;
  if (!claim.reads.some((r) => r.id === read.id && r.actingGrant?.applicationId === acting))
    claim.reads.push(read);
}

/** The token an object of the answer presents, if it is one (identity, not shape). */
export const presentedTokenOf = (value: object): PresentedTokenRef | undefined =>
  storage.getStore()?.presented.get(value);
