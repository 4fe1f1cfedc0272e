/**
 * What DynamoDB can store as a map attribute, checked before a caller's structure (a token's mask, a proxy's or
 * reactor's configuration) reaches the store, so a value it would refuse is the caller's 400, not our 500:
 * - nesting: DynamoDB allows 32 levels in an item; a stored structure may use STORED_MAX_DEPTH of them (the
 *   rest is the item's own nesting, e.g. a token copied into a transaction record);
 * - numbers: integers within ±(2^53 − 1) (the document client refuses larger ones as imprecise; every double
 *   beyond that is an integer) and fractions of magnitude at least 1e-130 (DynamoDB's smallest number);
 * - map keys: non-empty;
 * - size: the JSON text at most `maxBytes` (items are at most 400 KB).
 */
export const STORED_MAX_DEPTH = 24;

const MIN_MAGNITUDE = 1e-130;

function numberStorable(n: number): boolean {
  if (Number.isInteger(n)) return Number.isSafeInteger(n);
  return Number.isFinite(n) && Math.abs(n) >= MIN_MAGNITUDE;
}

/** Why `value` cannot be stored as given, or undefined when it can. Iterative: no depth overflows it. */
export function storableProblem(value: unknown, maxBytes: number): string | undefined {
  const pending: { value: unknown; depth: number }[] = [{ value, depth: 1 }];
  while (pending.length > 0) {
    const { value: current, depth } = pending.pop() as { value: unknown; depth: number };
    if (typeof current === "number" && !numberStorable(current))
      return "holds a number the store cannot keep (integers within ±9007199254740991, fractions of at least 1e-130)";
    if (typeof current !== "object" || current === null) continue;
    if (depth > STORED_MAX_DEPTH) return `must nest at most ${STORED_MAX_DEPTH} levels`;
    const entries = Array.isArray(current)
      ? current.map((item) => ["0", item] as const)
      : Object.entries(current);
    for (const [key, item] of entries) {
      if (key === "") return "must not hold an empty key";
      pending.push({ value: item, depth: depth + 1 });
    }
  }
  const bytes = Buffer.byteLength(JSON.stringify(value) ?? "");
  return bytes > maxBytes ? `must serialize to at most ${maxBytes} bytes` : undefined;
}
