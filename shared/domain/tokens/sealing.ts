import { createHash } from "node:crypto";
import type { Sealer } from "#shared/domain/crypto/sealer.ts";
import { validationError } from "#shared/domain/errors.ts";
import type { TokenDeps } from "./deps.ts";
import { dataSizeProblem, type StoredToken } from "./token.ts";
import { type TokenType, typeSpec } from "./types.ts";

/** The cvc of a card is readable for one hour after it was given. */
export const CVC_LIFETIME_SECONDS = 3600;

/**
 * Seals data and, for cards, the cvc apart (it must become unreadable after an hour). Every token write seals
 * its data here, so the size limit is checked here: create, PATCH (a merge result too), reactor `tokenize`,
 * `svc` calls, transactions, and any later route that writes tokens.
 * `stored`: the token's own data sealed again as it is (a rewrap), not data written: the limits a write is held to
 * are not asked of it again. Data stored before a limit was (a reactor's data deeper than 64 levels, refused only
 * since review s54) was refused here as "unrenderable" and left under the old key versions at every rewrap.
 */
export async function sealData(
  deps: TokenDeps,
  tenantId: string,
  tokenId: string,
  type: TokenType,
  data: unknown,
  options: { stored?: boolean } = {},
) {
  const tooLarge = options.stored ? undefined : dataSizeProblem(data);
  if (tooLarge) throw validationError("The data is too large.", { data: [tooLarge] });
  const { cvc, rest } = splitCvc(type, data);
  const sealed_data = await deps.sealer.seal({ tenantId, tokenId, field: "data" }, JSON.stringify(rest));
  if (cvc === undefined) return { sealed_data };
  // Under its data's key: a token needs one data key, whatever rotated in between (keys/key-refs.ts).
  const sealed_cvc = await deps.sealer.seal(
    { tenantId, tokenId, field: "cvc" },
    encodeCvc(cvc),
    sealed_data.split(".")[1],
  );
  const cvc_expires_at = new Date(deps.clock.now().getTime() + CVC_LIFETIME_SECONDS * 1000).toISOString();
  return { sealed_data, sealed_cvc, cvc_expires_at };
}

/** A card's cvc and the rest of its data. Only a card's: another type's `cvc` field is data like any other. */
export function splitCvc(type: TokenType, data: unknown): { cvc?: string | number; rest: unknown } {
  if (type !== "card" || typeof data !== "object" || data === null || Array.isArray(data) || !("cvc" in data))
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
  // Each binding a literal of one shape (every read passes here): a spread of a shared one took V8's slow paths.
  const data: unknown = JSON.parse(
    await deps.sealer.open(
      { tenantId: token.tenant_id, tokenId: token.id, field: "data" },
      token.sealed_data,
    ),
  );
  const cvcReadable =
    token.sealed_cvc && token.cvc_expires_at && Date.parse(token.cvc_expires_at) > deps.clock.now().getTime();
  if (!cvcReadable || typeof data !== "object" || data === null) return data;
  const cvc = decodeCvc(
    await deps.sealer.open(
      { tenantId: token.tenant_id, tokenId: token.id, field: "cvc" },
      token.sealed_cvc as string,
    ),
  );
  return { ...data, cvc };
}

/**
 * The token's fingerprint: an HMAC of the rendered fingerprint expression, scoped by tenant and type. A token whose
 * expression is not its type's default is scoped by a hash of that expression too, so tokens fingerprinted by
 * different expressions never compare (an expression that renders another value than its data cannot make a
 * deduplicating create of that value find it). Default-expression fingerprints keep the plain type scope.
 */
export function fingerprintOf(
  deps: { sealer: Pick<Sealer, "tokenHash"> },
  tenantId: string,
  type: TokenType,
  expression: string,
  rendered: string,
  hmacVersion?: number,
): Promise<string> {
  const scope =
    expression === typeSpec(type).fingerprint
      ? type
      : `${type}#x:${createHash("sha256").update(expression, "utf8").digest("hex")}`;
  return deps.sealer.tokenHash(tenantId, scope, rendered, hmacVersion);
}
