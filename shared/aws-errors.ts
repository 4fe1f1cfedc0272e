/**
 * Reading AWS SDK v3 errors by their name and fields only (no AWS types): one reader for the store adapters and
 * the HTTP layer's outage classification (http/outage.ts), so both read a cancelled transaction alike.
 */

/**
 * A cancelled transaction's per-item reason codes, in the order of its items ("None" for an item that did not
 * fail, as DynamoDB reports it), or undefined for any other error.
 */
export function cancellationCodes(error: unknown): string[] | undefined {
  if (!(error instanceof Error) || error.name !== "TransactionCanceledException") return undefined;
  const reasons = (error as Error & { CancellationReasons?: unknown }).CancellationReasons;
  if (!Array.isArray(reasons)) return undefined;
  return reasons.map((reason: { Code?: unknown } | undefined) =>
    typeof reason?.Code === "string" ? reason.Code : "None",
  );
}
