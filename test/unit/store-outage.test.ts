import { createServer, request } from "node:http";
import type { AddressInfo } from "node:net";
import { describe, expect, it } from "vitest";
import { StoreHealth } from "#shared/domain/store-health.ts";
import { isStoreOutage } from "#shared/http/outage.ts";
import { httpErrorOf } from "#shared/http/problem.ts";
import { drainable } from "#shared/local/drain.ts";

const named = (name: string, extra: Record<string, unknown> = {}) =>
  Object.assign(new Error("message the caller never sees"), { name }, extra);
const cancelled = (...codes: string[]) =>
  named("TransactionCanceledException", { CancellationReasons: codes.map((Code) => ({ Code })) });

describe("what counts as a store outage (503 + Retry-After)", () => {
  it.each([
    ["a refused connection", Object.assign(new Error("connect"), { code: "ECONNREFUSED" })],
    ["a dropped connection", Object.assign(new Error("socket hang up"), { code: "ECONNRESET" })],
    ["the SDK's connection or request timeout", named("TimeoutError")],
    ["a throttle after the SDK's retries", named("ProvisionedThroughputExceededException")],
    ["a request-rate throttle", named("ThrottlingException")],
    ["DynamoDB's own failure", named("InternalServerError")],
    ["a transaction cancelled by a conflict", cancelled("None", "TransactionConflict")],
    ["a transaction cancelled by a throttle", cancelled("ThrottlingError", "None")],
    ["a wrapped connection failure", new TypeError("fetch failed", { cause: named("TimeoutError") })],
  ])("%s", (_what, error) => {
    const http = httpErrorOf(error);

    expect(isStoreOutage(error)).toBe(true);
    expect(http?.status).toBe(503);
    expect(Number(http?.headers?.["retry-after"])).toBeGreaterThan(0);
    expect(http?.detail).not.toContain("message the caller never sees");
  });

  it.each([
    [
      "a transaction cancelled by a failed condition (the domain's answer)",
      cancelled("None", "ConditionalCheckFailed"),
    ],
    ["a transaction cancelled without reasons", named("TransactionCanceledException")],
    ["a malformed request", named("ValidationException")],
    ["a plain bug", new TypeError("x is undefined")],
  ])("not %s", (_what, error) => {
    expect(isStoreOutage(error)).toBe(false);
    expect(httpErrorOf(error)).toBeUndefined();
  });
});

describe("the health check's view of the store", () => {
  const clockAt = (time: { ms: number }) => ({ now: () => new Date(time.ms) });

  it("probes once per second of the service clock, however many checks arrive together", async () => {
    const time = { ms: 0 };
    let probes = 0;
    let up = true;
    const health = new StoreHealth(
      {
        reachable: async () => {
          probes += 1;
          return up;
        },
      },
      clockAt(time),
    );

    const together = await Promise.all([health.reachable(), health.reachable(), health.reachable()]);
    up = false;
    time.ms += 999;
    const cached = await health.reachable();
    time.ms += 1;
    const probedAgain = await health.reachable();

    expect(together).toEqual([true, true, true]);
    expect(cached).toBe(true);
    expect(probedAgain).toBe(false);
    expect(probes).toBe(2);
  });

  it("takes a probe that throws for unreachable", async () => {
    const health = new StoreHealth(
      {
        reachable: async () => {
          throw new Error("boom");
        },
      },
      clockAt({ ms: 0 }),
    );

    expect(await health.reachable()).toBe(false);
  });
});

describe("draining the local gateway", () => {
  async function serverHolding() {
    const held: (() => void)[] = [];
    const server = createServer((_req, res) => {
      held.push(() => res.end("done"));
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const port = (server.address() as AddressInfo).port;
    const call = () =>
      new Promise<string>((resolve) => {
        request({ port, host: "127.0.0.1", agent: false }, (res) => {
          let body = "";
          res.on("data", (c: Buffer) => {
            body += c.toString();
          });
          res.on("end", () => resolve(body));
          res.on("error", () => resolve("cut"));
        })
          .on("error", () => resolve("cut"))
          .end();
      });
    const arrived = async (count: number) => {
      while (held.length < count) await new Promise((r) => setTimeout(r, 10));
    };
    return { server, held, call, arrived };
  }

  it("answers the requests in flight before closing, within the grace period", async () => {
    const { server, held, call, arrived } = await serverHolding();
    const drainer = drainable(server);
    const inFlight = call();
    await arrived(1);

    const drained = drainer.drain(60_000);
    for (const release of held) release();

    expect(await inFlight).toBe("done");
    expect(await drained).toBe(0);
    expect(server.listening).toBe(false);
  });

  it("cuts what is still running at the end of the grace period, and says how many", async () => {
    const { server, call, arrived } = await serverHolding();
    const drainer = drainable(server);
    const inFlight = [call(), call()];
    await arrived(2);

    const cut = await drainer.drain(0);

    expect(cut).toBe(2);
    expect(await Promise.all(inFlight)).toEqual(["cut", "cut"]);
  });
});
