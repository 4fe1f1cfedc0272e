import { createServer, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { exchange } from "#shared/egress/exchange.ts";
import { IDLE_CONNECTION_MS, MAX_TENANT_SOCKETS } from "#shared/egress/pools.ts";

/**
 * A tenant's outbound connections (its proxies, callbacks and code's fetches share its pool) are bounded: the
 * host's descriptor table is every tenant's. Before, 20 reactions of one tenant, each with 50 fetches to a
 * destination that never answered, held 1,000 sockets (sandbox review of 28 Nov 2026).
 */
const held: ServerResponse[] = [];
/** Held answers by request path. */
const heldAt = new Map<string, ServerResponse>();
let seen = 0;
let peak = 0;
let open = 0;
const server = createServer((req, res) => {
  seen += 1;
  open += 1;
  peak = Math.max(peak, open);
  res.on("close", () => {
    open -= 1;
  });
  if (req.url === "/now") res.end("ok");
  else {
    held.push(res); // answered when the test says
    heldAt.set(String(req.url), res);
  }
});
let base = "";

beforeAll(async () => {
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => {
  server.closeAllConnections();
  server.close();
});

const call = (tenantId: string, path: string) => {
  const url = new URL(path, base);
  return exchange(
    { url, hostname: url.hostname, port: Number(url.port), path, method: "GET", headers: {} },
    { tenantId, allowPrivate: true, timeoutMs: 30_000 },
  );
};

/** performance.now() moved on by what `skip` adds (the pools' idle rule reads it), for the length of `run`. */
async function withSkewedClock(run: (skip: (ms: number) => void) => Promise<void>) {
  const realNow = performance.now.bind(performance);
  let skew = 0;
  const spy = vi.spyOn(performance, "now").mockImplementation(() => realNow() + skew);
  try {
    await run((ms) => {
      skew += ms;
    });
  } finally {
    spy.mockRestore();
    for (const res of held.splice(0)) res.end("late");
  }
}

/** Waits for `done` (as long as the test's own timeout lets it: a busy machine takes longer, never fails sooner). */
const until = async (done: () => boolean) => {
  while (!done()) await new Promise((resolve) => setTimeout(resolve, 10));
};

describe("a tenant's outbound connections", () => {
  it(`are at most ${MAX_TENANT_SOCKETS} at once: further requests wait, another tenant's go at once`, async () => {
    peak = open; // counted from here: the tests run in any order (vitest --sequence.shuffle)
    const start = seen;
    const flood = Array.from({ length: MAX_TENANT_SOCKETS + 150 }, (_, i) => call("tenant-a", `/held/${i}`));
    await until(() => seen >= start + MAX_TENANT_SOCKETS);

    // Another tenant has its own pool: answered while the flood's requests wait.
    expect((await call("tenant-b", "/now")).body.toString()).toBe("ok");
    expect(seen - start).toBe(MAX_TENANT_SOCKETS + 1);

    // As the held ones are answered, the waiting ones go out on the freed connections, never more at once.
    while (held.length > 0 || seen < start + MAX_TENANT_SOCKETS + 151) {
      for (const res of held.splice(0)) res.end("late");
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    const answers = await Promise.all(flood);
    expect(answers.every((answer) => answer.body.toString() === "late")).toBe(true);
    expect(peak).toBeLessThanOrEqual(MAX_TENANT_SOCKETS + 1);
  });

  it("stay capped when the tenant pauses past the idle limit between bursts (its busy pool is kept)", async () => {
    // Before: a pool none of whose calls started or ended for the idle limit was replaced by a fresh one (a fresh
    // cap) while its sockets were still held by requests in flight: pausing 4 s between bursts gave another 100.
    peak = open;
    const start = seen;
    await withSkewedClock(async (skip) => {
      const bursts: Promise<unknown>[] = [];
      for (let burst = 0; burst < 3; burst++) {
        const before = seen;
        for (let i = 0; i < MAX_TENANT_SOCKETS; i++)
          bursts.push(call("tenant-pause", `/pause/${burst}/${i}`).catch(() => undefined));
        if (burst === 0) await until(() => seen >= before + MAX_TENANT_SOCKETS);
        skip(IDLE_CONNECTION_MS + 100); // nothing of its pool started or ended meanwhile
      }
      // Another tenant's request goes out and is answered: by then the bursts' requests have had their chance.
      expect((await call("tenant-other", "/now")).body.toString()).toBe("ok");
      expect(peak).toBeLessThanOrEqual(MAX_TENANT_SOCKETS + 1);
      while (held.length > 0 || seen < start + 3 * MAX_TENANT_SOCKETS + 1) {
        for (const res of held.splice(0)) res.end("late");
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
      await Promise.all(bursts);
      expect(peak).toBeLessThanOrEqual(MAX_TENANT_SOCKETS + 1);
    });
  });

  it("close a kept busy pool's idle connections past the idle limit, and a new call still goes out", async () => {
    await withSkewedClock(async (skip) => {
      const before = seen;
      const slow = call("tenant-idle", "/idle/slow");
      const quick = call("tenant-idle", "/idle/quick");
      await until(() => heldAt.has("/idle/slow") && heldAt.has("/idle/quick"));
      heldAt.get("/idle/quick")?.end("quick"); // one connection free again, the other still in use
      expect((await quick).body.toString()).toBe("quick");
      skip(IDLE_CONNECTION_MS + 100);
      const after = call("tenant-idle", "/idle/after");
      await until(() => seen >= before + 3);
      heldAt.get("/idle/after")?.end("after");
      expect((await after).body.toString()).toBe("after");
      heldAt.get("/idle/slow")?.end("slow");
      expect((await slow).body.toString()).toBe("slow");
    });
  });
});
