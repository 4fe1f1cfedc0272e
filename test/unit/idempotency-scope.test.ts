import { executionAsyncId } from "node:async_hooks";
import { describe, expect, it } from "vitest";
import {
  currentIdempotencyClaim,
  type IdempotencyClaimRef,
  runWithIdempotencyClaim,
} from "#shared/domain/idempotency-scope.ts";

const claim = (key: string): IdempotencyClaimRef => ({ scope: "s", key, claimId: `c-${key}`, effects: [] });

/** Resolves on a later turn, so that each claim's handler is still running while the other starts and ends. */
const turn = () => new Promise((resolve) => setTimeout(resolve, 5));

describe("runWithIdempotencyClaim", () => {
  it("gives each concurrent handler its own claim, and none once it has answered", async () => {
    const [a, b] = [claim("a"), claim("b")];
    const seen: Record<string, (IdempotencyClaimRef | undefined)[]> = { a: [], b: [] };
    let leftBehind: Promise<IdempotencyClaimRef | undefined> | undefined;
    await Promise.all([
      runWithIdempotencyClaim(a, async () => {
        seen.a?.push(currentIdempotencyClaim());
        await turn();
        await turn(); // b has ended meanwhile
        seen.a?.push(currentIdempotencyClaim());
        leftBehind = turn().then(() => currentIdempotencyClaim());
      }),
      runWithIdempotencyClaim(b, async () => {
        seen.b?.push(currentIdempotencyClaim());
        await turn();
        seen.b?.push(currentIdempotencyClaim());
      }),
    ]);
    expect(seen).toEqual({ a: [a, a], b: [b, b] });
    // Work a handler left behind records nothing on its claim.
    expect(await leftBehind).toBeUndefined();
    expect(currentIdempotencyClaim()).toBeUndefined();
  });

  it("leaves no promise hook behind once the last claim has ended (Node 20 and 22 keep one per enabled storage)", async () => {
    // Without async hooks a promise's reaction runs with no execution async id; with one, every promise gets one.
    await null;
    expect(executionAsyncId()).toBe(0);
    let inside = 0;
    await runWithIdempotencyClaim(claim("k"), async () => {
      await turn();
      expect(currentIdempotencyClaim()?.key).toBe("k");
      await null;
      inside = executionAsyncId();
    });
    await null;
    expect(executionAsyncId()).toBe(0);
    // The claim's own context had its store (hooks on, where the storage needs them: Node 20 and 22).
    if (Number(process.versions.node.split(".")[0]) < 24) expect(inside).not.toBe(0);
  });
});
