import { createHash } from "node:crypto";
import type { Transform } from "#shared/domain/access-rules.ts";
import type { Sealer } from "#shared/domain/crypto/sealer.ts";
import { validationError } from "#shared/domain/errors.ts";
import { notePresentedToken } from "#shared/domain/idempotency-scope.ts";
import { storableProblem } from "#shared/domain/storable.ts";
import type { HoldDeps } from "#shared/domain/transactions.ts";
import type { Clock } from "#shared/ports/clock.ts";
import type { AuditLogStore, TokenStore } from "#shared/ports/stores.ts";
import { type ExpressionEngine, ExpressionError, variablesRead } from "./expressions.ts";
import { dataSizeProblem, MAX_MASK_BYTES, type StoredToken } from "./token.ts";
import { type TokenType, typeSpec } from "./types.ts";

export interface TokenDeps {
  tokens: TokenStore;
  /** A write that meets a held token asks whether its holder still may hold it (transactions.ts, releaseStaleHold). */
  transactions: HoldDeps["transactions"];
  applications: HoldDeps["applications"];
  auditLog: AuditLogStore;
  sealer: Sealer;
  expressions: ExpressionEngine;
  clock: Clock;
  /** On whose behalf (code's `req.svc` calls): said in every audit entry (audit-entry.ts). */
  auditContext?: string;
}

/** The cvc of a card is readable for one hour after it was given. */
export const CVC_LIFETIME_SECONDS = 3600;

export function isExpired(token: Pick<StoredToken, "expires_at">, now: Date): boolean {
  return token.expires_at !== undefined && Date.parse(token.expires_at) <= now.getTime();
}

/** Expired, or created in a transaction not yet committed: to everyone else such a token does not exist. */
export function isLive(token: Pick<StoredToken, "expires_at" | "lock">, now: Date): boolean {
  return !isExpired(token, now) && token.lock?.operation !== "create";
}

/**
 * Seals data and, for cards, the cvc apart (it must become unreadable after an hour). Every token write seals
 * its data here, so the size limit is checked here: create, PATCH (a merge result too), reactor `tokenize`,
 * `svc` calls, transactions, and any later route that writes tokens.
 */
export async function sealData(deps: TokenDeps, tenantId: string, tokenId: string, data: unknown) {
  const tooLarge = dataSizeProblem(data);
  if (tooLarge) throw validationError("The data is too large.", { data: [tooLarge] });
  const { cvc, rest } = splitCvc(data);
  const sealed_data = await deps.sealer.seal({ tenantId, tokenId, field: "data" }, JSON.stringify(rest));
  if (cvc === undefined) return { sealed_data };
  const sealed_cvc = await deps.sealer.seal({ tenantId, tokenId, field: "cvc" }, encodeCvc(cvc));
  const cvc_expires_at = new Date(deps.clock.now().getTime() + CVC_LIFETIME_SECONDS * 1000).toISOString();
  return { sealed_data, sealed_cvc, cvc_expires_at };
}

export function splitCvc(data: unknown): { cvc?: string | number; rest: unknown } {
  if (typeof data !== "object" || data === null || Array.isArray(data) || !("cvc" in data))
    return { rest: data };
  const { cvc, ...rest } = data as Record<string, unknown>;
  return typeof cvc === "string" || typeof cvc === "number" ? { cvc, rest } : { rest };
}

/**
 * The sealed cvc keeps the type the client sent. A string is sealed as it is (as every cvc stored before numbers
 * were accepted), a number with a `#` before its digits: validation lets only digits through as a string, so
 * the two never meet, and the type stays inside the ciphertext with the value.
 */
function encodeCvc(cvc: string | number): string {
  return typeof cvc === "number" ? `#${cvc}` : cvc;
}

function decodeCvc(plain: string): string | number {
  return plain.startsWith("#") ? Number(plain.slice(1)) : plain;
}

/** The token's data as the caller gave it, with the cvc while it is still readable. */
export async function openData(deps: TokenDeps, token: StoredToken): Promise<unknown> {
  const binding = { tenantId: token.tenant_id, tokenId: token.id };
  const data: unknown = JSON.parse(await deps.sealer.open({ ...binding, field: "data" }, token.sealed_data));
  const cvcReadable =
    token.sealed_cvc && token.cvc_expires_at && Date.parse(token.cvc_expires_at) > deps.clock.now().getTime();
  if (!cvcReadable || typeof data !== "object" || data === null) return data;
  const cvc = decodeCvc(await deps.sealer.open({ ...binding, field: "cvc" }, token.sealed_cvc as string));
  return { ...data, cvc };
}

/**
 * Renders a caller's expression; an expression error is the caller's 400, naming the field, never the data.
 * `dataDependent`: the data is not (all) the caller's own, so the answer is the same whatever the error was.
 */
export async function renderField(
  deps: TokenDeps,
  field: string,
  template: string,
  data: unknown,
  options: { dataDependent?: boolean } = {},
): Promise<string> {
  try {
    return await deps.expressions.render(template, { data });
  } catch (error) {
    if (!(error instanceof ExpressionError)) throw error;
    if (options.dataDependent)
      throw validationError(`The ${field} could not be evaluated on the token's data.`);
    throw validationError(`The ${field} could not be evaluated.`, { [field]: [error.message] });
  }
}

export function checkExpression(deps: TokenDeps, field: string, template: string): void {
  try {
    deps.expressions.validate(template);
  } catch (error) {
    if (error instanceof ExpressionError)
      throw validationError(`The ${field} is not a valid expression.`, { [field]: [error.message] });
    throw error;
  }
}

/**
 * A fingerprint expression must read `data` (a global of the parsed template, not one it assigns itself):
 * a constant would give every token one fingerprint, and deduplication would hand back unrelated tokens.
 */
export function checkFingerprintExpression(deps: TokenDeps, template: string): void {
  checkExpression(deps, "fingerprint_expression", template);
  if (!variablesRead(template).includes("data"))
    throw validationError("The fingerprint_expression must depend on the token's data.", {
      fingerprint_expression: ["must read data, e.g. {{ data | stringify }}"],
    });
}

/**
 * The token's fingerprint: an HMAC of the rendered fingerprint expression, scoped by tenant and type. A token whose
 * expression is not its type's default is scoped by a hash of that expression too, so tokens fingerprinted by
 * different expressions never compare (an expression that renders another value than its data cannot make a
 * deduplicating create of that value find it). Default-expression fingerprints keep the plain type scope.
 */
export function fingerprintOf(
  deps: Pick<TokenDeps, "sealer">,
  tenantId: string,
  type: TokenType,
  expression: string,
  rendered: string,
): Promise<string> {
  const scope =
    expression === typeSpec(type).fingerprint
      ? type
      : `${type}#x:${createHash("sha256").update(expression, "utf8").digest("hex")}`;
  return deps.sealer.fingerprint(tenantId, scope, rendered);
}

/** A mask the store keeps (also after a merge patch), whose every string leaf is a valid expression. */
export function checkMask(deps: TokenDeps, mask: unknown): void {
  const problem = storableProblem(mask, MAX_MASK_BYTES);
  if (problem) throw validationError("The mask cannot be stored.", { mask: [problem] });
  checkMaskExpressions(deps, mask);
}

function checkMaskExpressions(deps: TokenDeps, mask: unknown, path = "mask"): void {
  if (typeof mask === "string") checkExpression(deps, path, mask);
  else if (Array.isArray(mask)) {
    for (const [i, item] of mask.entries()) checkMaskExpressions(deps, item, `${path}.${i}`);
  } else if (typeof mask === "object" && mask !== null)
    for (const [key, value] of Object.entries(mask)) checkMaskExpressions(deps, value, `${path}.${key}`);
}

export interface TokenView {
  id: string;
  tenant_id: string;
  type: string;
  data?: unknown;
  mask?: unknown;
  /** Only in revealed answers: to anyone else a fingerprint would be an oracle for the masked value. */
  fingerprint?: string;
  fingerprint_expression: string;
  containers: string[];
  metadata?: Record<string, string>;
  search_indexes?: string[];
  expires_at?: string;
  created_by?: string;
  created_at: string;
  modified_by?: string;
  modified_at?: string;
}

/** True for a mask that is evaluated on reads (null and absent mean "no mask": masked reads show no data). */
export const hasMask = (mask: unknown): boolean => mask !== undefined && mask !== null;

/**
 * Evaluates a mask on the data it is about to be stored with. Every write that stores a mask, or data under
 * one, calls this before it writes: a mask that cannot render on its data is the caller's 400 and nothing is
 * stored (otherwise every masked read of the token, and every list holding it, would fail). `dataDependent`:
 * the data is not (all) the caller's own, so the answer is the same whatever the error was.
 */
export async function renderMask(
  deps: TokenDeps,
  mask: unknown,
  data: unknown,
  options: { dataDependent?: boolean } = {},
): Promise<unknown> {
  try {
    return await deps.expressions.evaluateStructure(mask, { data });
  } catch (error) {
    if (!(error instanceof ExpressionError)) throw error;
    if (options.dataDependent) throw validationError("The mask could not be evaluated on the token's data.");
    throw validationError("The mask could not be evaluated on the token's data.", { mask: [error.message] });
  }
}

export interface PresentOptions {
  /** The token's mask already evaluated on this data (by the write that stores it): not evaluated again. */
  masked?: { value: unknown };
  /**
   * A list's item: a mask that fails on the stored data shows the item redacted (no `data`) instead of failing
   * the whole answer. Otherwise the failure is a 400 naming nothing of the data.
   */
  redactOnMaskError?: boolean;
}

/**
 * The token as a caller sees it: `data` revealed, masked by the token's mask, or left out (redact). The
 * `fingerprint` only with `reveal`: it equals the fingerprint of a token created with the same value, so a
 * caller who sees it masked (last 4 digits of an SSN) could confirm guesses of the rest by creating candidates.
 */
export async function present(
  deps: TokenDeps,
  token: StoredToken,
  transform: Transform,
  data: () => Promise<unknown>,
  options: PresentOptions = {},
): Promise<TokenView> {
  const view: TokenView = {
    id: token.id,
    tenant_id: token.tenant_id,
    type: token.type,
    ...(token.mask !== undefined ? { mask: token.mask } : {}),
    ...(transform === "reveal" ? { fingerprint: token.fingerprint } : {}),
    fingerprint_expression: token.fingerprint_expression,
    containers: [token.container],
    ...(token.metadata ? { metadata: token.metadata } : {}),
    ...(token.search_indexes ? { search_indexes: token.search_indexes } : {}),
    ...(token.expires_at ? { expires_at: token.expires_at } : {}),
    ...(token.created_by ? { created_by: token.created_by } : {}),
    created_at: token.created_at,
    ...(token.modified_by ? { modified_by: token.modified_by } : {}),
    ...(token.modified_at ? { modified_at: token.modified_at } : {}),
  };
  const shown = await withData(deps, token, transform, view, data, options);
  // An idempotent answer stores this reference, never the data (domain/idempotency-scope.ts).
  notePresentedToken(shown, {
    id: token.id,
    transform,
    version: token.version,
    ...(token.mask !== undefined ? { mask: token.mask } : {}),
  });
  return shown;
}

async function withData(
  deps: TokenDeps,
  token: StoredToken,
  transform: Transform,
  view: TokenView,
  data: () => Promise<unknown>,
  options: PresentOptions,
): Promise<TokenView> {
  if (transform === "reveal") return { ...view, data: await data() };
  if (transform !== "mask" || !hasMask(token.mask)) return view;
  if (options.masked) return { ...view, data: options.masked.value };
  const scope = { data: await data() };
  try {
    return { ...view, data: await deps.expressions.evaluateStructure(token.mask, scope) };
  } catch (error) {
    if (!(error instanceof ExpressionError)) throw error;
    if (options.redactOnMaskError) return view;
    // The mask ran on stored data: the same answer whatever the data (and the error) was.
    throw validationError("The token's mask could not be evaluated on its data.");
  }
}
