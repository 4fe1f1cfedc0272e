import { isPlainObject } from "#shared/domain/merge-patch.ts";
import { HttpError } from "#shared/http/errors.ts";
import type { TokenAccess } from "./access.ts";
import { ExpressionError } from "./expressions.ts";
import { isExpired, openData, type TokenDeps } from "./service.ts";
import type { StoredToken } from "./token.ts";

/**
 * Detokenization expressions: `{{ <id> }}` and `{{ token: <id> | <filters> }}` (filters as in Liquid).
 * The id stops at whitespace, `|` or `}`; token ids never hold those characters.
 */
const EXPRESSION = /\{\{\s*(?:token\s*:\s*)?([^\s|}]+)\s*((?:\|[^}]*)?)\}\}/g;
const WHOLE = new RegExp(`^\\s*${EXPRESSION.source}\\s*$`);

/** At most this many distinct tokens per request (the spec's reactor limit, applied to proxies too). */
export const MAX_DETOKENIZED = 100;

export class DetokenizeError extends HttpError {}

const unknownToken = (id: string) =>
  new DetokenizeError(
    400,
    "unknown-token",
    "Bad Request",
    `The token ${JSON.stringify(id)} in a detokenization expression does not exist.`,
  );
const forbiddenToken = (id: string) =>
  new DetokenizeError(
    403,
    "forbidden",
    "Forbidden",
    `The key may not use the token ${JSON.stringify(id)} (token:use on its container).`,
  );

interface Reference {
  id: string;
  filters: string;
}

function referencesIn(text: string): Reference[] {
  return [...text.matchAll(EXPRESSION)].map((m) => ({ id: m[1] as string, filters: (m[2] ?? "").trim() }));
}

/** Every expression in a JSON value's strings (keys are left alone), or in a text. */
export function findReferences(value: unknown): Reference[] {
  if (typeof value === "string") return referencesIn(value);
  if (Array.isArray(value)) return value.flatMap(findReferences);
  if (isPlainObject(value)) return Object.values(value).flatMap(findReferences);
  return [];
}

export interface Detokenizer {
  /** Replaces expressions in a JSON value: a string that is exactly one expression becomes the token's value. */
  json(value: unknown): Promise<unknown>;
  /** Replaces expressions in a text; objects are written as JSON. */
  text(value: string): Promise<string>;
  /** The tokens used so far (for the audit log). */
  used(): StoredToken[];
}

/**
 * Resolves tokens for one request: each once, checked for token:use on its container with the caller's access,
 * its data transformed as that access says (reveal, mask, or nothing for redact), then the filters applied.
 */
export function createDetokenizer(deps: TokenDeps, tenantId: string, access: TokenAccess): Detokenizer {
  const tokens = new Map<string, Promise<{ token: StoredToken; data: unknown }>>();
  const usedTokens: StoredToken[] = [];
  const values = new Map<string, Promise<unknown>>();

  const load = (id: string) => {
    let pending = tokens.get(id);
    if (!pending) {
      if (tokens.size >= MAX_DETOKENIZED)
        throw new DetokenizeError(
          400,
          "too-many-tokens",
          "Bad Request",
          `At most ${MAX_DETOKENIZED} tokens can be detokenized per request.`,
        );
      pending = (async () => {
        const token = await deps.tokens.get(tenantId, id);
        if (!token || isExpired(token, deps.clock.now()) || token.lock?.operation === "create")
          throw unknownToken(id);
        const transform = access.evaluate(token, "token:use");
        if (!transform) throw forbiddenToken(id);
        usedTokens.push(token);
        if (transform === "redact") return { token, data: null };
        const plain = await openData(deps, token);
        if (transform === "reveal") return { token, data: plain };
        const masked =
          token.mask === undefined
            ? null
            : await deps.expressions.evaluateStructure(token.mask, { data: plain });
        return { token, data: masked };
      })();
      tokens.set(id, pending);
    }
    return pending;
  };

  const resolve = (ref: Reference): Promise<unknown> => {
    const key = `${ref.id}\u0000${ref.filters}`;
    let pending = values.get(key);
    if (!pending) {
      pending = load(ref.id).then(async ({ data }) => {
        if (!ref.filters) return data;
        try {
          return await deps.expressions.evaluate(`{{ data ${ref.filters} }}`, { data });
        } catch (error) {
          if (error instanceof ExpressionError)
            throw new DetokenizeError(
              400,
              "invalid-expression",
              "Bad Request",
              `A detokenization expression is invalid: ${error.message}`,
            );
          throw error;
        }
      });
      values.set(key, pending);
    }
    return pending;
  };

  const asText = (value: unknown) =>
    value === null || value === undefined ? "" : typeof value === "string" ? value : JSON.stringify(value);

  const replaceIn = async (text: string): Promise<string> => {
    const refs = referencesIn(text);
    if (refs.length === 0) return text;
    const resolved = await Promise.all(refs.map(resolve));
    let index = 0;
    return text.replace(EXPRESSION, () => asText(resolved[index++]));
  };

  const json = async (value: unknown): Promise<unknown> => {
    if (typeof value === "string") {
      const whole = WHOLE.exec(value);
      if (whole) return resolve({ id: whole[1] as string, filters: (whole[2] ?? "").trim() });
      return replaceIn(value);
    }
    if (Array.isArray(value)) return Promise.all(value.map(json));
    if (isPlainObject(value))
      return Object.fromEntries(
        await Promise.all(Object.entries(value).map(async ([k, v]) => [k, await json(v)] as const)),
      );
    return value;
  };

  return {
    json,
    text: replaceIn,
    used: () => [...usedTokens],
  };
}
