import { describe, expect, it } from "vitest";
import { retryingConflicts, TRANSACTION_CONFLICT_ATTEMPTS } from "#shared/adapters/dynamodb/client.ts";

const cancelled = (...codes: string[]) =>
  Object.assign(new Error("Transaction cancelled"), {
    name: "TransactionCanceledException",
    CancellationReasons: codes.map((Code) => ({ Code })),
  });

/** A send that fails with the given errors in turn, then succeeds; counts its calls. */
function sendFailing(...errors: Error[]) {
  const calls = { count: 0 };
  const send = async () => {
    const error = errors[calls.count++];
    if (error) throw error;
    return "written";
  };
  return { send, calls };
}

describe("retryingConflicts", () => {
  it("retries a transaction cancelled only by another transaction on its items", async () => {
    const { send, calls } = sendFailing(
      cancelled("None", "TransactionConflict"),
      cancelled("TransactionConflict"),
    );

    await expect(retryingConflicts(send)).resolves.toBe("written");
    expect(calls.count).toBe(3);
  });

  it("gives up after the attempt limit", async () => {
    const conflicts = Array.from({ length: TRANSACTION_CONFLICT_ATTEMPTS }, () =>
      cancelled("TransactionConflict"),
    );
    const { send, calls } = sendFailing(...conflicts);

    await expect(retryingConflicts(send)).rejects.toThrow("Transaction cancelled");
    expect(calls.count).toBe(TRANSACTION_CONFLICT_ATTEMPTS);
  });

  it.each([
    ["a failed condition", cancelled("ConditionalCheckFailed", "TransactionConflict")],
    ["another error", new Error("throttled")],
  ])("never retries %s", async (_, error) => {
    const { send, calls } = sendFailing(error);

    await expect(retryingConflicts(send)).rejects.toBe(error);
    expect(calls.count).toBe(1);
  });
});
