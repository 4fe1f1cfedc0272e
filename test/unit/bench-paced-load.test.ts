/**
 * The bench's fixed-rate load (scripts/bench/paced.ts) must spread its requests over the second, not send a
 * second's quota in one burst (what autocannon's overallRate does), and must count a late answer from when its
 * request was due.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { runPacedLoad } from "../../scripts/bench/paced.ts";

let server: Server | undefined;
afterEach(() => new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve())));

async function listen(answerAfterMs: number, arrivals: number[]): Promise<string> {
  const listening = createServer((req, res) => {
    arrivals.push(performance.now());
    req.resume();
    req.on("end", () => setTimeout(() => res.end("{}"), answerAfterMs));
  });
  server = listening;
  await new Promise<void>((resolve) => listening.listen(0, "127.0.0.1", () => resolve()));
  return `http://127.0.0.1:${(listening.address() as AddressInfo).port}`;
}

const spec = (url: string, connections: number) => ({
  url,
  connections,
  durationSeconds: 0.5,
  overallRate: 40,
  headers: { "content-type": "application/json" },
  method: "POST" as const,
  path: () => "/",
  body: () => "{}",
});

describe("paced load", () => {
  it("sends the rate's requests evenly spaced, never a burst", async () => {
    const arrivals: number[] = [];
    const url = await listen(0, arrivals);
    const before = performance.now();
    const figures = await runPacedLoad(spec(url, 16));
    expect(figures.requests).toBe(20);
    expect(figures.statusCodes).toEqual({ "200": 20 });
    // Request i is due 25 ms × i after the run starts and never leaves before it is due, so at most i requests can
    // have arrived 25 ms × i after the call. A busy machine only delays requests, so this holds however loaded it is;
    // a burst (the whole second's quota at once) breaks it.
    const sorted = [...arrivals].sort((a, b) => a - b);
    sorted.forEach((arrival, i) => {
      expect(arrival - before).toBeGreaterThanOrEqual(i * 25 - 1);
    });
  });

  it("counts a request's time from when it was due, also while it waited for a connection", async () => {
    // One connection, answers after 50 ms, a request due every 25 ms: each waits longer than the last. The last is
    // due at 475 ms and answered at 1,000 ms at the earliest; counted from when it was sent it would take 50 ms.
    const figures = await runPacedLoad(spec(await listen(50, []), 1));
    expect(figures.requests).toBe(20);
    expect(figures.p99).toBeGreaterThan(400);
  });
});
