/**
 * Attack: one tenant floods the local sandbox pool with long runs of many distinct formulas, so that every
 * process is busy (a busy process cannot be evicted) and other tenants' runs find none until the flood
 * times out. Each tenant may keep at most its fair share busy, max(1, floor(processes / (busy tenants + 1))):
 * the flood's excess waits, and another tenant's run gets a process at once.
 */
import { describe, expect, it } from "vitest";
import { client } from "#test/support/http.ts";
import { useService } from "#test/support/service.ts";
import { react, reactorTenant } from "./sandbox-tenant.ts";

// A small pool and a short react timeout keep the flood cheap: 4 processes, runs stopped after 6 s.
process.env.SVC_SANDBOX_PROCESSES = "4";
process.env.SVC_SYNC_REACT_TIMEOUT_MS = "6000";
const svc = useService();

/** Holds its process (without using CPU) past the react timeout; distinct code, so a process each. */
const hold = (n: number) => `module.exports = async function () {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 10000);
  return { raw: ${n} };
};`;

describe("attack: one tenant holds every sandbox process", () => {
  it("gets the flooder no more than its share, and another tenant's run a process at once", async () => {
    const api = client(svc.url);
    const flooder = await reactorTenant(
      api,
      svc.rootKey,
      [0, 1, 2, 3, 4, 5].map((n) => hold(n)),
    );
    const bystander = await reactorTenant(api, svc.rootKey, [
      `module.exports = async function () { return { raw: "bystander" }; };`,
    ]);

    let floodAnswered = 0;
    const flood = flooder.reactors.map((_id, i) =>
      react(api, flooder, i).finally(() => {
        floodAnswered += 1;
      }),
    );
    await new Promise((resolve) => setTimeout(resolve, 1000));
    const other = await react(api, bystander);

    expect(other.status, JSON.stringify(other.body)).toBe(200);
    expect(other.body.raw).toBe("bystander");
    // Without a share the flood holds all 4 processes until its runs time out (6 s after they started), so the
    // bystander would be answered only after the flood's first answers; with it, the bystander takes the spare
    // (or starts a process) while every flood run is still held. An order, not a duration: a loaded machine
    // slows both sides.
    expect(floodAnswered).toBe(0);
    for (const res of await Promise.all(flood)) {
      expect(res.status).toBe(504);
      expect(res.headers.get("content-type")).toContain("application/problem+json");
    }
  }, 60_000);
});
