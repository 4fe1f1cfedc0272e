/**
 * The bench's share (scripts/bench/summary.ts) pairs the rounds that ran next to each other: a slow stretch of the
 * machine lowers both targets' runs of that round, and must not count as the service's.
 */
import { describe, expect, it } from "vitest";
import type { RunRecord } from "../../scripts/bench/runs.ts";
import { summarize } from "../../scripts/bench/summary.ts";

const run = (target: string, round: number, rps: number, targetMs = 1): RunRecord => ({
  scenario: "read",
  target,
  round,
  rps,
  p50: 20,
  p99: 40,
  requests: rps * 5,
  non2xx: 0,
  errors: 0,
  timeouts: 0,
  statusCodes: { "200": rps * 5 },
  cpu: { target_ms: targetMs, dynamodb_local_ms: 0.5, load_generator_ms: 0.1 },
});

const serviceOf = (records: RunRecord[]) => summarize(records).find((s) => s.target === "service");

describe("bench summary", () => {
  it("compares each round of the service with the floor's round next to it, and takes the median", () => {
    // The machine slows down from round 3 on: both targets lose half their throughput.
    const floor = [1000, 1000, 500, 500, 500].map((rps, i) => run("floor", i + 1, rps));
    const service = [920, 920, 460, 460, 460].map((rps, i) => run("service", i + 1, rps));
    const summary = serviceOf([...floor, ...service]);
    expect(summary?.ratio).toBe(0.92);
    expect(summary?.pass).toBe(true);
    // The two sides' own medians, kept beside it for comparison.
    expect(summary?.ratio_of_medians).toBe(0.92);
  });

  it("lets a slow stretch that only one side's runs met weigh as one round, not as that side's median", () => {
    // Rounds 2 and 3 of the service met a slow stretch its floor rounds (run before each) did not.
    const floor = [1000, 1000, 1000, 1000, 1000].map((rps, i) => run("floor", i + 1, rps));
    const service = [950, 600, 610, 940, 945].map((rps, i) => run("service", i + 1, rps));
    expect(serviceOf([...floor, ...service])?.ratio).toBe(0.94);
  });

  it("fails a service under the share in most rounds", () => {
    const floor = [1000, 1000, 1000].map((rps, i) => run("floor", i + 1, rps));
    const service = [880, 950, 870].map((rps, i) => run("service", i + 1, rps));
    expect(serviceOf([...floor, ...service])?.pass).toBe(false);
  });

  it("gives the CPU-bound cross-check round by round: the floor's CPU per request over the service's", () => {
    const floor = [1, 2, 3].map((r) => run("floor", r, 1000, 1.4));
    const service = [1, 2, 3].map((r) => run("service", r, 900, 1.6));
    // (1.4 + 0.5 + 0.1) / (1.6 + 0.5 + 0.1)
    expect(serviceOf([...floor, ...service])?.cpu_ratio).toBe(0.909);
  });

  it("leaves a round whose CPU is not fully known out of the CPU-bound median (no NaN in it)", () => {
    const floor = [run("floor", 1, 1000, 1.4), run("floor", 2, 1000, 1.5), run("floor", 3, 1000, 1.6)];
    // One party's CPU unknown in round 2 (cpuSpent: its process gone from /proc): totalCpu is NaN there.
    delete (floor[1] as RunRecord).cpu.dynamodb_local_ms;
    const service = [1, 2, 3].map((r) => run("service", r, 900, 1.6));
    // The known rounds: 2.0 / 2.2 and 2.2 / 2.2, median 0.955; a NaN sorted among them made it NaN (dropped).
    expect(serviceOf([...floor, ...service])?.cpu_ratio).toBe(0.955);
  });
});
