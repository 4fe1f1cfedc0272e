/**
 * `npx tsx scripts/sandbox-latency.ts`: latency of the local sandbox on this machine (not a test, no
 * assertion). Prints the first run of new code with and without a ready spare process, and warm runs.
 * Environment: MEASURE_WARM_RUNS (200), MEASURE_COLD_RUNS (10).
 */
import { setTimeout as sleep } from "node:timers/promises";
import { ProcessSandbox } from "#shared/sandbox/pool.ts";

const WARM_RUNS = Number(process.env.MEASURE_WARM_RUNS ?? 200);
const COLD_RUNS = Number(process.env.MEASURE_COLD_RUNS ?? 10);

/** A request transform of the usual size: reads the body, adds a header and a hash. */
const transform = (n: number) => `
const crypto = require("crypto");
module.exports = async function (req) {
  const body = req.args.body;
  const digest = crypto.createHash("sha256").update(JSON.stringify(body)).digest("hex");
  return { body: { ...body, version: ${n} }, headers: { ...req.args.headers, "x-digest": digest } };
};`;

const input = {
  args: {
    body: { card: { number: "4242424242424242", expiration_month: 12, expiration_year: 2030 }, amount: 1200 },
    headers: { "content-type": "application/json" },
    method: "POST",
    path: "/charges",
    query: "",
  },
  configuration: { merchant: "m-1" },
};

const quantile = (values: number[], q: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? Number.NaN;
};
const summary = (values: number[]) =>
  `p50 ${quantile(values, 0.5).toFixed(2)} ms, p90 ${quantile(values, 0.9).toFixed(2)} ms, max ${Math.max(...values).toFixed(2)} ms (n=${values.length})`;

async function timed(sandbox: ProcessSandbox, tenantId: string, code: string): Promise<number> {
  const started = performance.now();
  const result = await sandbox.run({ tenantId, code, input, timeoutMs: 5000 });
  const elapsed = performance.now() - started;
  if (!result.ok) throw new Error(`run failed: ${result.error.kind} ${result.error.message}`);
  return elapsed;
}

async function main(): Promise<void> {
  // New code, no spare: Node boots for the run.
  const noSpare = new ProcessSandbox({ prespawn: false });
  const coldBoot: number[] = [];
  for (let i = 0; i < COLD_RUNS; i++) coldBoot.push(await timed(noSpare, `tenant-${i}`, transform(i)));
  await noSpare.close();

  // New code, spare ready (the normal case once the pool is warm).
  const pool = new ProcessSandbox();
  await pool.warm();
  const coldSpare: number[] = [];
  for (let i = 0; i < COLD_RUNS; i++) {
    coldSpare.push(await timed(pool, `tenant-${i}`, transform(1000 + i)));
    await pool.warm();
    await sleep(20);
  }

  // Warm: the same tenant and code again and again.
  const code = transform(0);
  await timed(pool, "tenant-warm", code);
  const warm: number[] = [];
  for (let i = 0; i < WARM_RUNS; i++) warm.push(await timed(pool, "tenant-warm", code));

  // Floor: the same function in this process, no sandbox.
  const floor: number[] = [];
  const { createHash } = await import("node:crypto");
  for (let i = 0; i < WARM_RUNS; i++) {
    const started = performance.now();
    const copy = JSON.parse(JSON.stringify(input));
    const digest = createHash("sha256").update(JSON.stringify(copy.args.body)).digest("hex");
    JSON.stringify({
      body: { ...copy.args.body, version: 0 },
      headers: { ...copy.args.headers, "x-digest": digest },
    });
    floor.push(performance.now() - started);
  }
  await pool.close();

  console.log(`node ${process.versions.node}, ${process.platform}/${process.arch}`);
  console.log(`first run of new code, no spare (Node boots): ${summary(coldBoot)}`);
  console.log(`first run of new code, spare ready:           ${summary(coldSpare)}`);
  console.log(`warm run (same tenant and code):              ${summary(warm)}`);
  console.log(`same work in-process, no sandbox:             ${summary(floor)}`);
}

await main();
