/**
 * Attack (attacker review round 4): one tenant queues slow asynchronous reactions, so that every worker of the
 * job queue runs its code and every other tenant's reactions wait behind its backlog (8 queued runs of 9.5 s
 * held another tenant's result for 19 s). The queue serves tenants as an SQS fair queue serves message groups
 * (the tenant is the MessageGroupId in AWS): the oldest job of the tenant running fewest goes first, and no
 * tenant holds every worker, so another tenant's job starts at once.
 */
import { describe, expect, it } from "vitest";
import { client } from "#test/support/http.ts";
import { reactionResult } from "#test/support/reactors.ts";
import { useService } from "#test/support/service.ts";
import { type ReactorTenant, reactorTenant } from "./sandbox-tenant.ts";

const svc = useService();

/** Holds its process (without using CPU) past a queued run's 10 s limit; distinct code, so a process each. */
const hold = (n: number) => `module.exports = async function () {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 20000);
  return { raw: ${n} };
};`;

async function reactAsync(tenant: ReactorTenant, index = 0): Promise<string> {
  const res = await client(svc.url).post<{ asyncReactorRequestId: string }>(
    `/reactors/${tenant.reactors[index]}/react-async`,
    { key: tenant.user, body: { args: {} } },
  );
  expect(res.status, JSON.stringify(res.body)).toBe(202);
  return res.body.asyncReactorRequestId;
}

describe("attack: one tenant's slow asynchronous reactions hold up everyone else's", () => {
  it("runs another tenant's reaction while the flood's first runs are still held", async () => {
    const api = client(svc.url);
    const codes = [0, 1, 2, 3, 4, 5, 6, 7].map(hold);
    const flooder = await reactorTenant(api, svc.rootKey, codes);
    const bystander = await reactorTenant(api, svc.rootKey, [
      `module.exports = async function () { return { raw: "bystander" }; };`,
    ]);

    const flood: string[] = [];
    for (const index of codes.keys()) flood.push(await reactAsync(flooder, index));
    const mine = await reactAsync(bystander);

    const result = await reactionResult(api, bystander.user, bystander.reactors[0] ?? "", mine);
    expect(result.status, JSON.stringify(result.body)).toBe(200);
    expect(result.body).toMatchObject({ raw: "bystander" });
    // Behind the backlog, the bystander's job would start only once the flood's first runs had ended (their
    // 10 s limit) and stored their results. An order, not a duration: a loaded machine slows both sides.
    for (const [index, requestId] of flood.entries()) {
      const theirs = await api.get(`/reactors/${flooder.reactors[index]}/results/${requestId}`, {
        key: flooder.user,
      });
      expect(theirs.status, `flood reaction ${index}: ${JSON.stringify(theirs.body)}`).toBe(404);
    }
  }, 60_000);
});
