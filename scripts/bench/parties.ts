/**
 * The parties of the scenarios, each started once for all of them: DynamoDB Local (in memory), the proxy's
 * destination, the service and the floor, each target in a Node process of its own (targets.ts).
 */
import { randomUUID } from "node:crypto";
import { join } from "node:path";
import { startDynamoDbLocal } from "#shared/local/dynamodb-local.ts";
import { countDynamoDbLocal } from "./runs.ts";
import { log, settings, wants } from "./settings.ts";
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

/** The destination's path; the proxies and the proxy floor point at `<destination>/charges`. */
export const DESTINATION_PATH = "/charges";

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
  log("starting DynamoDB Local (in memory)…");
  const dynamo = await startDynamoDbLocal({});
  onCleanUp(() => dynamo.stop());
  countDynamoDbLocal(dynamo.javaPid);
  checkInterrupted();
  const started = async (name: RunningTarget["name"], env: Record<string, string> = {}) => {
    const target = await startTarget(name, env, join(dataDir, `${name}.log`), settings.nodeArgs);
    onCleanUp(() => target.stop());
    runningTargets.push(target);
    return target;
  };
  const rootKey = `key_root_bench_${randomUUID()}`;
  const store = (name: string) => ({
    BENCH_DYNAMODB_ENDPOINT: dynamo.endpoint,
    BENCH_DATA_DIR: join(dataDir, name),
  });
  // The destination first: the floor's proxy needs its URL.
  const destination = wants("proxy") ? await started("destination") : undefined;
  log("starting the service and the floor (one child process each)…");
  const [service, floor] = await Promise.all([
    started("service", {
      ...store("service"),
      BENCH_ROOT_KEY: rootKey,
      // The rate limiter stays on, so its cost is measured, with a limit the load cannot reach.
      SVC_RATE_LIMIT_PER_SECOND: process.env.SVC_RATE_LIMIT_PER_SECOND ?? "1000000",
    }),
    wants("tokenize", "read", "proxy")
      ? started("floor", {
          ...store("floor"),
          ...(destination ? { BENCH_DESTINATION_URL: `${destination.url}${DESTINATION_PATH}` } : {}),
        })
      : undefined,
  ]);
  log(runningTargets.map((t) => `${t.name} at ${t.url} (pid ${t.pid})`).join(", "));
  checkInterrupted();
  return { rootKey, service, floor, destination };
}
