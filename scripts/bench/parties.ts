/**
 * The parties of the load scenarios, each started once for all of them: DynamoDB Local (in memory), the proxy's
 * destination, the service and the floor, each target in a Node process of its own (targets.ts).
 */
import { randomUUID } from "node:crypto";
import { join } from "node:path";
import { type DynamoDbLocal, startDynamoDbLocal } from "#shared/local/dynamodb-local.ts";
import { DESTINATION_PATH } from "./proxy.ts";
import { countDynamoDbLocal } from "./runs.ts";
import { floorScenarios, log, settings } from "./settings.ts";
import { checkInterrupted, onCleanUp } from "./shutdown.ts";
import { type RunningTarget, startTarget } from "./targets.ts";

const runningTargets: RunningTarget[] = [];

/** The targets' last logged errors, to explain a failure (their logs are not shown otherwise). */
export function printProblems(): void {
  for (const target of runningTargets) {
    const problems = target.problems();
    if (problems.length === 0) continue;
    console.error(`\nlast errors logged by the ${target.name}:`);
    for (const line of problems) console.error(`  ${line.slice(0, 2000)}`);
  }
}

export interface Parties {
  rootKey: string;
  service: RunningTarget;
  /** For tokenize, read and proxy. */
  floor?: RunningTarget;
  /** For proxy. */
  destination?: RunningTarget;
}

/** Starts what the chosen scenarios need; each is stopped at shutdown (shutdown.ts). */
export async function startParties(dataDir: string): Promise<Parties> {
  const wantsProxy = settings.scenarios.includes("proxy");
  log("starting DynamoDB Local (in memory)…");
  const dynamo: DynamoDbLocal = await startDynamoDbLocal({});
  onCleanUp(() => dynamo.stop());
  countDynamoDbLocal(dynamo.javaPid);
  checkInterrupted();

  const rootKey = `key_root_bench_${randomUUID()}`;
  const wantsFloor = floorScenarios.length > 0 || wantsProxy;
  // The destination first: the floor's proxies need its URL.
  let destination: RunningTarget | undefined;
  // react-outbound calls it from a formula.
  if (wantsProxy || settings.scenarios.includes("react-outbound")) {
    log("starting the proxy's destination (a child process)…");
    const started = await startTarget("destination", {}, join(dataDir, "destination.log"));
    onCleanUp(() => started.stop());
    runningTargets.push(started);
    destination = started;
  }
  const parts = ["the service", ...(wantsFloor ? ["the floor"] : [])];
  log(`starting ${parts.join(" and ")} (one child process each)…`);
  const started = await Promise.allSettled([
    startTarget(
      "service",
      {
        BENCH_DYNAMODB_ENDPOINT: dynamo.endpoint,
        BENCH_DATA_DIR: join(dataDir, "service"),
        BENCH_ROOT_KEY: rootKey,
        // The rate limiter stays on, so its cost is measured, with a limit the load cannot reach.
        SVC_RATE_LIMIT_PER_SECOND: process.env.SVC_RATE_LIMIT_PER_SECOND ?? "1000000",
      },
      join(dataDir, "service.log"),
      settings.nodeArgs,
    ),
    wantsFloor
      ? startTarget(
          "floor",
          {
            BENCH_DYNAMODB_ENDPOINT: dynamo.endpoint,
            BENCH_DATA_DIR: join(dataDir, "floor"),
            ...(destination ? { BENCH_DESTINATION_URL: `${destination.url}${DESTINATION_PATH}` } : {}),
          },
          join(dataDir, "floor.log"),
          settings.nodeArgs,
        )
      : undefined,
  ]);
  for (const result of started)
    if (result.status === "fulfilled" && result.value) {
      const target = result.value;
      onCleanUp(() => target.stop());
      runningTargets.push(target);
    }
  const failedStart = started.find((r): r is PromiseRejectedResult => r.status === "rejected");
  if (failedStart) throw failedStart.reason;
  const [service, floor] = started.map((r) => (r.status === "fulfilled" ? r.value : undefined)) as [
    RunningTarget,
    RunningTarget | undefined,
  ];
  log(runningTargets.map((t) => `${t.name} at ${t.url} (pid ${t.pid})`).join(", "));
  checkInterrupted();
  return { rootKey, service, floor, destination };
}
