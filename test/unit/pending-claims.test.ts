import { describe, expect, it } from "vitest";
import { pendingClaim } from "#shared/domain/tokens/pending-claims.ts";
import type { TokenLock, TransactionContext } from "#shared/domain/tokens/token.ts";
import { BATCH_CLAIM_GRACE_SECONDS } from "#shared/domain/transactions.ts";

const NOW = 1_000_000;
const batchLock = (over: Partial<TokenLock> = {}): TokenLock => ({
  transactionId: "txn_b",
  operation: "create",
  expiresEpoch: NOW + 600,
  batchAnswerBy: NOW + 20,
  ...over,
});
const batch = (over: Partial<TransactionContext> = {}): TransactionContext => ({
  id: "txn_m",
  expiresEpoch: NOW + 600,
  batchAnswerBy: NOW + 20,
  ...over,
});

describe("a value's claim held by another transaction's pending create (pending-claims.ts)", () => {
  it("is no pending create when there is no lock, the lock is no create, or the create is the caller's own", () => {
    expect(pendingClaim(undefined, undefined, NOW)).toBe("not-pending");
    expect(pendingClaim(batchLock({ operation: "update" }), undefined, NOW)).toBe("not-pending");
    expect(pendingClaim(batchLock(), batch({ id: "txn_b" }), NOW)).toBe("not-pending");
  });

  it("takes over a caller's transaction's pending create at once: no open transaction holds a value", () => {
    expect(pendingClaim(batchLock({ batchAnswerBy: undefined }), undefined, NOW)).toBe("take-over");
    expect(pendingClaim(batchLock({ batchAnswerBy: undefined }), batch(), NOW)).toBe("take-over");
  });

  it("waits for a batch's pending create while its request may run, plus the grace of a late commit", () => {
    expect(pendingClaim(batchLock(), undefined, NOW)).toBe("wait");
    const lastWaitingSecond = NOW + 20 + BATCH_CLAIM_GRACE_SECONDS - 0.5;
    expect(pendingClaim(batchLock(), undefined, lastWaitingSecond)).toBe("wait");
    expect(pendingClaim(batchLock(), undefined, NOW + 20 + BATCH_CLAIM_GRACE_SECONDS)).toBe("lapsed-batch");
  });

  it("lets only the older of two batches wait (by expiry, then id): the younger gives up at once", () => {
    expect(pendingClaim(batchLock(), batch({ expiresEpoch: NOW + 601 }), NOW)).toBe("give-up");
    expect(pendingClaim(batchLock(), batch({ expiresEpoch: NOW + 599 }), NOW)).toBe("wait");
    expect(pendingClaim(batchLock(), batch({ id: "txn_c" }), NOW)).toBe("give-up"); // same expiry, later id
    expect(pendingClaim(batchLock(), batch({ id: "txn_a" }), NOW)).toBe("wait");
    // A caller's own (non-batch) transaction is never "younger": it waits like a plain create.
    expect(pendingClaim(batchLock(), batch({ batchAnswerBy: undefined, expiresEpoch: NOW + 900 }), NOW)).toBe(
      "wait",
    );
  });
});
