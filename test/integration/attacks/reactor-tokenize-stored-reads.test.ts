import { describe, expect, it } from "vitest";
import { formulaReactor, reactingTenant } from "#test/support/reactors.ts";
import { useService } from "#test/support/service.ts";
import type { TokenBody } from "#test/support/tokens.ts";

/**
 * Review a50 of 7287c00 (round 12): a reactor's tokenize block writes the caller's read entries in the batch's
 * `beforeCommit`, which replaced react.ts's own loop over the answered tokens. `beforeCommit` runs only when the
 * batch writes something (writeAll): a block whose every request is answered by an existing token found under an
 * earlier HMAC version (a rotation whose rewrap has not run yet) writes nothing, so no read entry is written for
 * the caller, who is shown the token's data all the same.
 */
const svc = useService();

interface LogPage {
  data: { operation: string; message?: string; actor?: unknown }[];
}

describe("a reactor's tokenize block answered from earlier-version duplicates", () => {
  it("logs the caller's read of the data it is shown (before 7287c00 it did; now no entry)", async () => {
    const { api, managementKey, acting, caller } = await reactingTenant(svc, [
      "token:create",
      "token:read",
      "token:use",
    ]);
    const value = "a value the caller is shown";
    const stored = await api.post<TokenBody>("/tokens", {
      key: acting.key,
      body: { type: "token", data: value, deduplicate_token: true },
    });
    expect(stored.status).toBe(201);
    // A rotation: the stored token keeps its HMAC v1 fingerprint until a rewrap re-hashes it.
    expect((await api.post("/tenants/self/keys/rotate", { key: managementKey })).status).toBe(200);

    const code = `module.exports = async () => ({
      tokenize: { a: { type: "token", data: ${JSON.stringify(value)}, deduplicate_token: true } },
    });`;
    const reactorId = await formulaReactor(api, managementKey, {
      formula: { name: "dedup", code },
      applicationId: acting.id,
    });

    const res = await api.post<{ tokens: { a: TokenBody } }>(`/reactors/${reactorId}/react`, {
      key: caller,
      body: { args: {} },
    });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    // The existing token, its data shown to the caller.
    expect(res.body.tokens.a.id).toBe(stored.body.id);
    expect(res.body.tokens.a.data).toBe(value);

    const logs = await api.get<LogPage>(`/logs?entity_id=${stored.body.id}&size=100`, { key: managementKey });
    const messages = logs.body.data.map((entry) => entry.message ?? "");
    // The caller's read, as every other tokenize block (one that writes) logs it.
    expect(messages.filter((m) => m.includes(`in the answer of reactor ${reactorId}`))).toHaveLength(1);
  });
});
