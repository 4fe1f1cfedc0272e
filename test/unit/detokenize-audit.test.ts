import { describe, expect, it } from "vitest";
import { RecordingMetrics } from "#shared/adapters/metrics/recording-metrics.ts";
import type { TokenAccess } from "#shared/domain/tokens/access.ts";
import type { TokenDeps } from "#shared/domain/tokens/deps.ts";
import { createDetokenizer } from "#shared/domain/tokens/detokenize.ts";
import type { StoredToken } from "#shared/domain/tokens/token.ts";

/** A detokenizer over one stored token, counting how often token data is opened. */
function detokenizerWith(audit: (tokens: readonly StoredToken[]) => Promise<void>) {
  const token = {
    id: "tok_1",
    tenant_id: "t1",
    type: "token",
    container: "/general/",
    sealed_data: "sealed",
    fingerprint: "fp",
    fingerprint_expression: "{{ data }}",
    created_at: "2026-01-01T00:00:00.000Z",
    version: 1,
  } as StoredToken;
  const opened: string[] = [];
  const deps = {
    tokens: { get: async (_tenant: string, id: string) => (id === token.id ? token : undefined) },
    sealer: {
      open: async () => {
        opened.push(token.id);
        return JSON.stringify("secret");
      },
    },
    clock: { now: () => new Date("2026-06-01T00:00:00Z") },
    metrics: new RecordingMetrics(),
  } as unknown as TokenDeps;
  const access: TokenAccess = { evaluate: () => "reveal", visibility: () => [], revealVisibility: () => [] };
  return { detokenizer: createDetokenizer(deps, "t1", access, audit), opened };
}

describe("createDetokenizer's audit hook (fail closed)", () => {
  it("hands the hook each token once, before any data is opened", async () => {
    const calls: { ids: string[]; openedBefore: number }[] = [];
    const { detokenizer, opened } = detokenizerWith(async (tokens) => {
      calls.push({ ids: tokens.map((t) => t.id), openedBefore: opened.length });
    });

    const first = await detokenizer.json({ a: "{{ tok_1 }}", b: "x {{ tok_1 }}" });
    const second = await detokenizer.text("again {{ tok_1 }}");

    expect(first).toEqual({ a: "secret", b: "x secret" });
    expect(second).toBe("again secret");
    expect(calls).toEqual([
      { ids: ["tok_1"], openedBefore: 0 },
      { ids: [], openedBefore: 1 },
    ]);
  });

  it("opens nothing and answers nothing when the hook rejects", async () => {
    const { detokenizer, opened } = detokenizerWith(async () => {
      throw new Error("the audit log is down");
    });

    await expect(detokenizer.json({ card: "{{ tok_1 }}" })).rejects.toThrow("the audit log is down");
    expect(opened).toEqual([]);
  });

  it("does not call the hook for a token it refuses (unknown), so nothing is logged as read", async () => {
    const calls: string[][] = [];
    const { detokenizer } = detokenizerWith(async (tokens) => {
      calls.push(tokens.map((t) => t.id));
    });

    await expect(detokenizer.json({ card: "{{ tok_unknown }}" })).rejects.toThrow(/does not exist/);
    expect(calls).toEqual([]);
  });
});
