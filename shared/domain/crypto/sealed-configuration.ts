import { validationError } from "../errors.ts";
import { sealedKeyIdOf } from "../keys/key-refs.ts";
import { storableProblem } from "../storable.ts";
import type { SealBinding, Sealer } from "./sealer.ts";

/**
 * A proxy's or reactor's `configuration` (where a destination's API keys usually go) as stored: its JSON sealed
 * under the tenant's data key (`sealed_configuration`), as a proxy's key is. Items written before configurations
 * were sealed hold a plain map (`configuration`) instead: read as it is, sealed by the next write of the item
 * and by a rewrap (keys/long-lived.ts). Nothing writes a plain map now.
 */
export interface ConfigurationAtRest {
  /** Only on items written before configurations were sealed. */
  configuration?: Record<string, unknown>;
  sealed_configuration?: string;
}

/** What a sealed configuration is bound to: its tenant, its proxy's or reactor's id and the field. */
export const configurationBinding = (
  resource: "proxy" | "reactor",
  tenantId: string,
  id: string,
): SealBinding => ({ tenantId, tokenId: id, field: `${resource}_configuration` });

/** The most a configuration holds, as JSON: sealed (4/3 of it) beside a reactor's code, it fits one item. */
export const MAX_CONFIGURATION_BYTES = 64 * 1024;

/** DynamoDB's 400 KB an item (UTF-8), less room for its keys and attribute names. */
export const MAX_ITEM_BYTES = 390_000;

/** Whether a proxy or reactor as stored (its code and sealed configuration together) passes one item. */
export const itemTooLarge = (stored: object): boolean =>
  Buffer.byteLength(JSON.stringify(stored), "utf8") > MAX_ITEM_BYTES;

/**
 * A 400 for a proxy or reactor that would not fit its item once sealed: code is bounded in characters, and
 * code of multi-byte characters beside a configuration a third larger sealed passed DynamoDB's limit (a 500).
 */
export function assertFitsItem<T extends object>(stored: T, what: "proxy" | "reactor"): T {
  if (!itemTooLarge(stored)) return stored;
  const problem = `with the ${what}'s code, must fit ${MAX_ITEM_BYTES} bytes of UTF-8 once sealed`;
  throw validationError(`The ${what} is too large to store.`, { configuration: [problem] });
}

/** A proxy or reactor as stored: its configuration (if any) sealed, the whole checked to fit its item. */
export async function sealForStore<T extends object>(
  sealer: Pick<Sealer, "seal">,
  what: "proxy" | "reactor",
  binding: SealBinding,
  fields: T,
  configuration: Record<string, unknown> | undefined,
): Promise<T & { sealed_configuration?: string }> {
  if (configuration === undefined) return assertFitsItem(fields, what);
  const sealed = { ...fields, sealed_configuration: await sealConfiguration(sealer, binding, configuration) };
  return assertFitsItem(sealed, what);
}

/** Why a configuration cannot be stored (too large, too deep, …), or undefined. */
export const configurationProblem = (configuration: Record<string, unknown>): string | undefined =>
  storableProblem(configuration, MAX_CONFIGURATION_BYTES);

/**
 * Every configuration written passes here: the request's own is checked by the schema, but a PATCH merges into
 * the stored one, and the merge must fit too (a 400, never a write DynamoDB refuses as too large: a 500).
 */
export async function sealConfiguration(
  sealer: Pick<Sealer, "seal">,
  binding: SealBinding,
  configuration: Record<string, unknown>,
): Promise<string> {
  const problem = configurationProblem(configuration);
  if (problem) throw validationError(`The configuration ${problem}.`, { configuration: [problem] });
  return sealer.seal(binding, JSON.stringify(configuration));
}

/** The configuration opened (the sealed one when there is one, else a plain map of an older item). */
export async function openConfiguration(
  sealer: Pick<Sealer, "open">,
  binding: SealBinding,
  stored: ConfigurationAtRest,
): Promise<Record<string, unknown> | undefined> {
  if (stored.sealed_configuration === undefined) return stored.configuration;
  return JSON.parse(await sealer.open(binding, stored.sealed_configuration)) as Record<string, unknown>;
}

/** Whether a rewrap to `currentKeyId` must write it: a plain map, or sealed under another key. */
export const configurationNeedsReseal = (stored: ConfigurationAtRest, currentKeyId: string): boolean =>
  stored.sealed_configuration === undefined
    ? stored.configuration !== undefined
    : sealedKeyIdOf(stored.sealed_configuration) !== currentKeyId;
