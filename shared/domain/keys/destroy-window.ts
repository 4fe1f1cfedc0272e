import { REACTION_RETENTION_SECONDS } from "#shared/ports/reactor-store.ts";
import { IDEMPOTENCY_RETENTION_SECONDS } from "#shared/ports/stores.ts";
import { dataVersionOf } from "./key-refs.ts";
import { KEY_STATE_CACHE_SECONDS } from "./key-state.ts";

/**
 * How long a data-key version may still open values sealed while it was current and kept for a while but never
 * re-sealed: idempotent answers and react-async outcomes (and the callback jobs' args, retried well within that),
 * plus the seconds another warm process may go on sealing under it after a rotation (its cached key state).
 * List and search cursors are held by the client, not stored: after the destroy one answers 400 (start again).
 */
export const SHORT_LIVED_SEALED_SECONDS =
  Math.max(IDEMPOTENCY_RETENTION_SECONDS, REACTION_RETENTION_SECONDS) + KEY_STATE_CACHE_SECONDS;

/**
 * When data-key `version` stopped being current: the start of the next rotation period, or an earlier rotation
 * (the creation of a later version's counted key), whichever came first.
 */
export function noLongerCurrentAt(
  version: number,
  records: readonly { keyId: string; createdAt?: string }[],
  periodStart: (version: number) => Date,
): Date {
  let at = periodStart(version + 1).getTime();
  for (const record of records) {
    const later = dataVersionOf(record.keyId);
    if (later === undefined || later <= version || !record.createdAt) continue;
    at = Math.min(at, Date.parse(record.createdAt));
  }
  return new Date(at);
}

/** The moment `version` may be destroyed: SHORT_LIVED_SEALED_SECONDS after it stopped being current. */
export function destroyableFrom(
  version: number,
  records: readonly { keyId: string; createdAt?: string }[],
  periodStart: (version: number) => Date,
): Date {
  return new Date(
    noLongerCurrentAt(version, records, periodStart).getTime() + SHORT_LIVED_SEALED_SECONDS * 1000,
  );
}
