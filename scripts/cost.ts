/**
 * `npm run cost`: what each operation costs, measured, not estimated (docs/scale.md).
 *
 * Starts DynamoDB Local (in memory), the proxy's destination (a child process) and the service in this process
 * with a usage meter (shared/composition/usage-meter.ts: every table call asks for its consumed capacity; the key
 * wrapper, job queue and sandbox count their calls), behind a measuring gateway (scripts/cost/measure.ts: CPU
 * and log bytes per handler call). Each operation of scripts/cost/operations.ts gets its own tenant, two warm-up
 * requests, then COST_SAMPLES (50) measured ones, one at a time. Prints per operation the means per request and
 * the price per million requests at the list prices of scripts/cost/prices.ts.
 *
 * `npm run cost -- --markdown` prints the tables as markdown (docs/scale.md); `--json <file>` also writes the
 * figures as JSON. COST_OPERATIONS (a comma-separated list of substrings of operation names) runs only those;
 * COST_TRACE=1 prints each table call of every operation's first measured request (its capacity, items put).
 */
import { randomUUID } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startLocalService } from "#functions/local.ts";
import { API_FUNCTION_MEMORY_MB } from "#lib/constructs/api-function.ts";
import { SANDBOX_RUNNER_MEMORY_MB } from "#lib/constructs/sandbox-runners.ts";
import { ensureSandboxPackages } from "#lib/sandbox-packages.ts";
import type { MeteredCall } from "#shared/adapters/dynamodb/consumed-capacity.ts";
import { UsageMeter } from "#shared/composition/usage-meter.ts";
import { startDynamoDbLocal } from "#shared/local/dynamodb-local.ts";
import { startTarget } from "./bench/targets.ts";
import { type SampleUsage, startMeasuringGateway } from "./cost/measure.ts";
import { type CostContext, type Measure, OPERATIONS } from "./cost/operations.ts";
import { PRICES } from "./cost/prices.ts";
import { figures, markdown, type OperationFigures, tables, text } from "./cost/report.ts";
import { intEnv } from "./int-env.ts";

const SAMPLES = intEnv("COST_SAMPLES", 50, 1, 100_000);
const WARM_UP = 2;
const args = process.argv.slice(2);
const asMarkdown = args.includes("--markdown");
const jsonFile = args.includes("--json") ? args[args.indexOf("--json") + 1] : undefined;
const only = (process.env.COST_OPERATIONS ?? "")
  .split(",")
  .map((s) => s.trim())
  .filter(Boolean);

const TRACE = process.env.COST_TRACE === "1";
const traceCall = (call: MeteredCall) =>
  log(
    `  ${call.command} RCU ${call.readUnits} WCU ${call.writeUnits}` +
      call.puts.map((put) => ` Put ${put.kind} ${put.bytes} B`).join(",") +
      (call.actions.length ? ` ${call.actions.join(", ")}` : ""),
  );
const log = (line: string) =>
  process.stderr.write(`[cost ${new Date().toISOString().slice(11, 19)}] ${line}\n`);

async function main(): Promise<void> {
  const dataDir = mkdtempSync(join(tmpdir(), "svc-cost-"));
  const cleanUps: (() => Promise<unknown>)[] = [
    async () => rmSync(dataDir, { recursive: true, force: true }),
  ];
  const cleanUp = async () => {
    for (const step of cleanUps.reverse()) await step().catch(() => undefined);
  };
  process.once("SIGINT", () => void cleanUp().finally(() => process.exit(130)));
  try {
    // As npm start: the packages tenant code may require, built once on a fresh clone.
    if (await ensureSandboxPackages()) log("built the sandbox packages");
    log("starting DynamoDB Local (in memory) and the proxy's destination…");
    const dynamo = await startDynamoDbLocal({});
    cleanUps.push(() => dynamo.stop());
    const destination = await startTarget("destination", {}, join(dataDir, "destination.log"));
    cleanUps.push(() => destination.stop());

    const meter = new UsageMeter();
    const rootKey = `key_root_cost_${randomUUID()}`;
    log("starting the service with its usage meter…");
    const service = await startLocalService({
      port: 0,
      rootKey,
      dataDir: join(dataDir, "service"),
      masterKeyFile: join(dataDir, "master.key"),
      dynamodbEndpoint: dynamo.endpoint,
      testClock: false,
      // The destination is on 127.0.0.1.
      proxyAllowPrivate: true,
      meter,
    });
    cleanUps.push(() => service.stop({ graceSeconds: 1 }));
    const gateway = await startMeasuringGateway(service, meter);
    cleanUps.push(() => gateway.stop());

    const ctx: CostContext = {
      url: gateway.url,
      rootKey,
      destinationUrl: destination.url,
      queueIdle: gateway.queueIdle,
    };
    const memory = { apiMb: API_FUNCTION_MEMORY_MB, runnerMb: SANDBOX_RUNNER_MEMORY_MB };
    const results: OperationFigures[] = [];
    const discard: Measure = (work) => work();
    for (const operation of OPERATIONS) {
      if (only.length > 0 && !only.some((part) => operation.name.includes(part))) continue;
      log(`${operation.name}: set-up, ${WARM_UP} warm-up and ${SAMPLES} measured requests…`);
      const sample = await operation.prepare(ctx);
      for (let i = 0; i < WARM_UP; i++) await sample(i, discard);
      const samples: SampleUsage[] = [];
      const measure = gateway.measureInto(samples);
      if (TRACE) {
        meter.capacity.onCall = traceCall;
        await sample(WARM_UP, measure);
        meter.capacity.onCall = undefined;
      }
      for (let i = WARM_UP + (TRACE ? 1 : 0); i < WARM_UP + SAMPLES; i++) await sample(i, measure);
      results.push(figures(operation.name, operation.tokensPerRequest ?? 1, samples, memory));
    }

    const printed = tables(results).map(asMarkdown ? markdown : text);
    const notes = [
      `Region ${PRICES.region}; API functions arm64 at ${memory.apiMb} MB, runners at ${memory.runnerMb} MB; ` +
        `${SAMPLES} requests per operation after ${WARM_UP} warm-up, ${new Date().toISOString().slice(0, 10)}.`,
      `Lambda low: the measured CPU; high: CPU × ${(PRICES.lambda.fullVcpuMemoryMb / memory.apiMb).toFixed(2)} ` +
        `(the vCPU share of ${memory.apiMb} MB) + serial table calls × ${PRICES.dynamodbRoundTripMs} ms.`,
    ];
    process.stdout.write(`${[...printed, ...notes].join("\n\n")}\n`);
    if (jsonFile)
      writeFileSync(
        jsonFile,
        `${JSON.stringify({ prices: PRICES, memory, samples: SAMPLES, results }, null, 2)}\n`,
      );
  } finally {
    await cleanUp();
  }
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(error instanceof Error ? (error.stack ?? error.message) : error);
    process.exit(1);
  },
);
