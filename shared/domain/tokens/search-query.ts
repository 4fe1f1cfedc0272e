import { validationError } from "#shared/domain/errors.ts";
import { hasForbiddenSegment } from "#shared/domain/safe-keys.ts";

/** A parsed search: one term, and at most one `container:` ANDed with it. */
export type SearchTerm =
  | { kind: "data"; value: string }
  | { kind: "fingerprint"; value: string }
  | { kind: "type"; value: string }
  | { kind: "container"; value: string }
  | { kind: "metadata"; key: string; value: string };

export interface ParsedSearch {
  term: SearchTerm;
  container?: string;
}

const SYNTAX =
  'one term (data:, fingerprint:, type:, container:, metadata.<key>:), optionally "AND container:<container>"; quote a value holding spaces';

function invalid(reason: string): never {
  throw validationError(`The search query is invalid: ${reason}.`, { query: [SYNTAX] });
}

/** `name:value` or `name:"value with spaces"` (\" and \\ escape inside quotes). */
function parseTerm(text: string): SearchTerm {
  const colon = text.indexOf(":");
  if (colon <= 0) invalid("a term is name:value");
  const name = text.slice(0, colon);
  let value = text.slice(colon + 1);
  if (value.startsWith('"')) {
    if (value.length < 2 || !value.endsWith('"')) invalid("a quoted value must end with a quote");
    value = value.slice(1, -1).replace(/\\(["\\])/g, "$1");
  } else if (/\s/.test(value)) invalid("quote a value holding spaces");
  if (value === "") invalid("a term needs a value");
  if (name === "data" || name === "fingerprint" || name === "type" || name === "container")
    return { kind: name, value };
  if (name.startsWith("metadata.") && name.length > "metadata.".length) {
    const key = name.slice("metadata.".length);
    if (hasForbiddenSegment(key)) invalid("that metadata key is reserved");
    return { kind: "metadata", key, value };
  }
  return invalid("unknown term");
}

/** Splits on ` AND ` outside quotes. */
function splitAnd(query: string): string[] {
  const parts: string[] = [];
  let current = "";
  let quoted = false;
  for (let i = 0; i < query.length; i++) {
    const c = query[i] as string;
    if (c === "\\" && quoted) {
      current += c + (query[i + 1] ?? "");
      i++;
      continue;
    }
    if (c === '"') quoted = !quoted;
    if (!quoted && query.startsWith(" AND ", i)) {
      parts.push(current.trim());
      current = "";
      i += 4;
      continue;
    }
    current += c;
  }
  parts.push(current.trim());
  return parts;
}

/** The query of POST /v2/tokens/search; anything else is a 400 saying the syntax (never echoing the value). */
export function parseSearchQuery(query: string): ParsedSearch {
  const parts = splitAnd(query.trim());
  if (parts.length > 2) invalid("at most two terms");
  const terms = parts.map(parseTerm);
  if (terms.length === 1) return { term: terms[0] as SearchTerm };
  const containers = terms.filter((t) => t.kind === "container");
  const others = terms.filter((t) => t.kind !== "container");
  if (containers.length !== 1 || others.length !== 1) invalid("a second term must be the only container:");
  return { term: others[0] as SearchTerm, container: (containers[0] as SearchTerm).value };
}
