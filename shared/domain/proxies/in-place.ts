import type { Detokenizer } from "#shared/domain/tokens/detokenize.ts";

/** Where each string literal of a JSON text is, and whether it is an object's key. The text is valid JSON. */
function stringLiterals(json: string): { start: number; end: number; key: boolean }[] {
  const literals: { start: number; end: number; key: boolean }[] = [];
  for (let i = 0; i < json.length; i++) {
    if (json[i] !== '"') continue;
    let end = i + 1;
    while (json[end] !== '"') end += json[end] === "\\" ? 2 : 1;
    let next = end + 1;
    while (next < json.length && " \t\n\r".includes(json[next] as string)) next++;
    literals.push({ start: i, end: end + 1, key: json[next] === ":" });
    i = end;
  }
  return literals;
}

/**
 * A JSON body with its detokenization expressions replaced where they are: each value string holding one is
 * written again (a string that is exactly one expression becomes the token's value, of any JSON type), and every
 * other character stays as the caller wrote it: numbers beyond 2^53, `1.10`, duplicate keys, spacing. Parsing
 * and writing the whole body again had changed them (a payment's `order_id` 1234567890123456789 arrived as …800).
 */
export async function detokenizeJsonInPlace(json: string, detokenizer: Detokenizer): Promise<string> {
  // A value string holds an expression by what it says, escapes read (`\u007b\u007b` is `{{` too): the same
  // strings the audit's token list came from (the parsed body), so none is named there and left unreplaced.
  const mayHold = (raw: string) => raw.includes("{{") || /\\u007b/i.test(raw);
  const holding = stringLiterals(json).flatMap((s) => {
    const raw = json.slice(s.start, s.end);
    if (s.key || !mayHold(raw)) return [];
    const value = JSON.parse(raw) as string;
    return value.includes("{{") ? [{ ...s, value }] : [];
  });
  // One call for all of them: the request's tokens are checked, and audited, before any data is opened.
  const strings: unknown[] = holding.map((s) => s.value);
  const values = (await detokenizer.json(strings)) as unknown[];
  let out = "";
  let from = 0;
  holding.forEach((s, i) => {
    out += json.slice(from, s.start) + (JSON.stringify(values[i]) ?? "null");
    from = s.end;
  });
  return out + json.slice(from);
}
