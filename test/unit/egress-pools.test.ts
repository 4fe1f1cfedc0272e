import { createServer, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { exchange } from "#shared/egress/exchange.ts";
import { MAX_TENANT_SOCKETS } from "#shared/egress/pools.ts";

/**
 * A tenant's outbound connections (its proxies, callbacks and code's fetches share its pool) are bounded: the
 * host's descriptor table is every tenant's. Before, 20 reactions of one tenant, each with 50 fetches to a
 * destination that never answered, held 1,000 sockets (sandbox review of 28 Nov 2026).
 */
const held: ServerResponse[] = [];
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
  else held.push(res); // answered when the test says
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

const until = async (done: () => boolean) => {
  for (let i = 0; i < 500 && !done(); i++) await new Promise((resolve) => setTimeout(resolve, 10));
};

describe("a tenant's outbound connections", () => {
  it(`are at most ${MAX_TENANT_SOCKETS} at once: further requests wait, another tenant's go at once`, async () => {
    const flood = Array.from({ length: MAX_TENANT_SOCKETS + 150 }, (_, i) => call("tenant-a", `/held/${i}`));
    await until(() => seen >= MAX_TENANT_SOCKETS);

    // Another tenant has its own pool: answered while the flood's requests wait.
    expect((await call("tenant-b", "/now")).body.toString()).toBe("ok");
    expect(seen).toBe(MAX_TENANT_SOCKETS + 1);

    // As the held ones are answered, the waiting ones go out on the freed connections, never more at once.
    while (held.length > 0 || seen < MAX_TENANT_SOCKETS + 151) {
      for (const res of held.splice(0)) res.end("late");
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    const answers = await Promise.all(flood);
    expect(answers.every((answer) => answer.body.toString() === "late")).toBe(true);
    expect(peak).toBeLessThanOrEqual(MAX_TENANT_SOCKETS + 1);
  });
});
