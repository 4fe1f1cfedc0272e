import { describe, expect, it } from "vitest";
import { useService } from "#test/support/service.ts";
import { appKey, revealEverything, tenantWithOwner } from "#test/support/tokens.ts";

const svc = useService();

/** Makes the store method `name` fail once, as a request that dies at that point would. */
function failOnce(target: object, name: string) {
  const holder = target as Record<string, unknown>;
  const original = holder[name] as (...args: unknown[]) => Promise<unknown>;
  holder[name] = async () => {
    holder[name] = original;
    throw new Error("simulated crash");
  };
}

async function setup(prefix: string) {
  const { api, tenant, owner } = await tenantWithOwner(svc);
  const reader = await appKey(api, tenant.managementKey, { type: "private", rules: revealEverything });
  const ids = Array.from({ length: 120 }, (_, i) => `${prefix}-${i}`);
  const body = ids.map((id) => ({ type: "token", id, data: `value of ${id}` }));
  const status = async (id: string) => (await api.get(`/tokens/${id}`, { key: reader })).status;
  const sweepAfter = (seconds: number) =>
    api.post("/_test/clock", { key: svc.rootKey, body: { advance_seconds: seconds } });
  return { api, owner, ids, body, status, sweepAfter };
}

describe("a batch whose request dies", () => {
  it("after its commit point: none visible until the sweep finishes it, then all, none lost", async () => {
    const { api, owner, ids, body, status, sweepAfter } = await setup("after");
    // The commit point is passed (the record says committed), then the unlocking dies.
    failOnce(svc.service.deps.transactions, "rollForward");
    const headers = { "svc-idempotency-key": "died-after-commit" };
    const died = await api.post("/tokenize", { key: owner, body, headers });
    expect(died.status).toBe(500);
    expect(await status(ids[0] as string)).toBe(404);
    // Its effect is recorded: a retry with the key never runs it again.
    const retried = await api.post("/tokenize", { key: owner, body, headers });
    expect(retried.status).toBe(409);

    // Past the batch's lifetime the sweep applies what was committed.
    await sweepAfter(20 * 60);
    for (const id of [ids[0], ids[60], ids[119]]) expect(await status(id as string)).toBe(200);
  });

  it("before its commit point: nothing visible, the sweep rolls it back and the ids are free again", async () => {
    const { api, owner, ids, body, status, sweepAfter } = await setup("before");
    // A taken id stops the batch; its rollback dies too, so the staged tokens stay pending.
    await api.post("/tokens", { key: owner, body: { type: "token", id: "before-taken", data: "x" } });
    failOnce(svc.service.deps.transactions, "rollback");
    const died = await api.post("/tokenize", {
      key: owner,
      body: [...body, { type: "token", id: "before-taken", data: "y" }],
      headers: { "svc-idempotency-key": "died-before-commit" },
    });
    expect(died.status).toBe(500);
    expect(await status(ids[0] as string)).toBe(404);
    const blocked = await api.post("/tokenize", { key: owner, body });
    expect(blocked.status).toBe(409);

    await sweepAfter(20 * 60);
    expect(await status(ids[0] as string)).toBe(404);
    // No effect was recorded: the same key runs the batch anew.
    const again = await api.post("/tokenize", {
      key: owner,
      body,
      headers: { "svc-idempotency-key": "died-before-commit" },
    });
    expect(again.status).toBe(201);
    expect(await status(ids[119] as string)).toBe(200);
  });
});
