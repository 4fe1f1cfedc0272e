/**
 * DynamoDB's limits (its service quotas) that the adapters size their reads and writes by, said once: each write
 * that packs items names the limit it keeps to.
 */
import { EFFECT_RECORD_ITEMS } from "./idempotent-effects.ts";

/** Items in one TransactWriteItems. */
const TRANSACT_ITEMS = 100;
/**
 * What one of our TransactWriteItems may hold: any write of an idempotent request also carries its effect's record
 * (idempotent-effects.ts, added by the client, client.ts), whatever adapter sent it.
 */
export const OWN_TRANSACT_ITEMS = TRANSACT_ITEMS - EFFECT_RECORD_ITEMS;
/** Requests in one BatchWriteItem. */
export const BATCH_WRITE_ITEMS = 25;
/** Keys in one BatchGetItem. */
export const BATCH_GET_KEYS = 100;
/**
 * Bytes of the items a packed write fills: under one TransactWriteItems' 4 MB, with room for what is added to them
 * (a record's update, an audit entry, counters). An update's item carries a whole token (up to 400 KB).
 */
export const PACK_BYTES = 3_500_000;
/** A value's size as DynamoDB counts it, in UTF-8 bytes (of its JSON text: a close upper bound). */
export const utf8Bytes = (value: unknown): number => Buffer.byteLength(JSON.stringify(value) ?? "", "utf8");
