/**
 * Child-process entry of a benchmark target: `target-process.ts <floor|service|destination>`, configured by the
 * BENCH_* variables parties.ts sets. Starts the target on a free port of 127.0.0.1, sends `{ ready: url }` over
 * the IPC channel, and stops on SIGTERM or when the parent goes away (Ctrl-C is the parent's). With BENCH_TRACE=1
 * it times the target's DynamoDB calls (a middleware added from here) and answers a `calls` message with those
 * since the previous one. A start-up failure is its exit, with the error on stderr.
 */
import { join } from "node:path";
import type { DynamoDBDocumentClient } from "@aws-sdk/lib-dynamodb";
import { startLocalService } from "#functions/local.ts";
import { startDestination } from "./destination.ts";
import { startFloorService } from "./floor-service.ts";

export type TargetName = "floor" | "service" | "destination";

/** DynamoDB calls by command name: how many, and their summed duration (ms). */
export type DynamoCalls = Record<string, { count: number; ms: number }>;

export type TargetMessage = { ready: string } | { calls: DynamoCalls };

function env(name: string): string {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set`);
  return value;
}

async function start(
  target: string,
): Promise<{ url: string; dynamo?: DynamoDBDocumentClient; stop(): Promise<unknown> }> {
  if (target === "destination") return startDestination();
  const [dynamodbEndpoint, dataDir] = [env("BENCH_DYNAMODB_ENDPOINT"), env("BENCH_DATA_DIR")];
  if (target === "floor")
    return startFloorService({
      dynamodbEndpoint,
      dataDir,
      destinationUrl: process.env.BENCH_DESTINATION_URL,
    });
  if (target !== "service") throw new Error(`unknown target ${target}; use floor, service or destination`);
  const service = await startLocalService({
    port: 0,
    rootKey: env("BENCH_ROOT_KEY"),
    dataDir,
    // A throwaway key for throwaway data: inside the bench's temporary directory, removed with it.
    masterKeyFile: join(dataDir, "master.key"),
    dynamodbEndpoint,
    testClock: false,
    // The proxy scenario's destination runs on 127.0.0.1 (off by default since issue 10).
    proxyAllowPrivate: true,
  });
  return { url: service.url, dynamo: service.deps.dynamo, stop: () => service.stop() };
}

/** Counts and times `client`'s calls; answers a function that takes those since its previous call. */
function traceCalls(client: DynamoDBDocumentClient): () => DynamoCalls {
  let calls: DynamoCalls = {};
  client.middlewareStack.add(
    (next, context) => async (args) => {
      const started = performance.now();
      const name = String(context.commandName ?? "unknown").replace(/Command$/, "");
      try {
        return await next(args);
      } finally {
        const { count, ms } = calls[name] ?? { count: 0, ms: 0 };
        calls[name] = { count: count + 1, ms: ms + performance.now() - started };
      }
    },
    { step: "initialize", name: "benchTrace" },
  );
  return () => {
    const taken = calls;
    calls = {};
    return taken;
  };
}

const send = (message: TargetMessage) => process.send?.(message);

if (!process.send) throw new Error("run by scripts/bench.ts (needs an IPC channel)");
const running = await start(process.argv[2] ?? "");
const takeCalls = process.env.BENCH_TRACE === "1" && running.dynamo ? traceCalls(running.dynamo) : () => ({});
let stopping = false;
const stop = () => {
  if (stopping) return;
  stopping = true;
  // A normal exit, so that --cpu-prof and similar flags get to write their output.
  void running.stop().finally(() => process.exit(0));
};
process.on("SIGINT", () => undefined);
process.on("SIGTERM", stop);
process.on("disconnect", stop);
process.on("message", (message) => {
  if (message === "calls") send({ calls: takeCalls() });
});
send({ ready: running.url });
