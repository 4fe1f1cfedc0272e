/**
 * `npm run fuzz`: a property-based fuzz (fast-check) of every write route of the route table, against the local
 * service started in this process on its own in-memory DynamoDB Local. See docs/fuzzing.md.
 *
 * Every answer must hold: status < 500; no stack frame or host path in the body; every 4xx an RFC 9457
 * problem+json with type, title and status; no 2xx on another tenant's resource. After each request the
 * built-in prototypes are compared with their state at start, and after each batch a canary tenant's
 * GET /tokens and POST /tokens must still answer as before (pollution of the process shows there).
 *
 * Environment: FUZZ_SEED (random; printed), FUZZ_RUNS (256 cases per route; 40 routes make >= 10,000),
 * FUZZ_BATCH (500 requests per batch: fresh fixtures and a canary check each), FUZZ_CONCURRENCY (6),
 * FUZZ_ROUTES (comma-separated operation ids or paths to restrict to), FUZZ_TIMEOUT_MS (60000),
 * FUZZ_SHOW (operation ids whose every request and answer is printed), FUZZ_LOGS=1 (keep the service's logs). Exit 1 on any failure.
 */

import { createHash } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import { routeList } from "#shared/api/index.ts";
import { caseArbitrary, type FuzzCase, WRITE_METHODS, type WriteRoute } from "./fuzz/cases.ts";
import { checkAnswer, cleanPollution, pollutionSince, prototypeSnapshot } from "./fuzz/check.ts";
import { describePlan, reproducer, summary, Tally } from "./fuzz/report.ts";
import { type Fixtures, markSent, prepare, secretsAfter, send } from "./fuzz/request.ts";
import { captureServiceLog, loggedErrorFor } from "./fuzz/server-log.ts";
import { Api, buildTenant, CARDS, card } from "./fuzz/world.ts";
import { intEnv } from "./int-env.ts";

const settings = {
  seed: intEnv("FUZZ_SEED", Math.floor(Math.random() * 2 ** 31), 0, 2 ** 31 - 1),
  runs: intEnv("FUZZ_RUNS", 256, 1, 1_000_000),
  batch: intEnv("FUZZ_BATCH", 500, 10, 1_000_000),
  concurrency: intEnv("FUZZ_CONCURRENCY", 6, 1, 256),
  timeoutMs: intEnv("FUZZ_TIMEOUT_MS", 60_000, 1_000, 600_000),
  only: (process.env.FUZZ_ROUTES ?? "")
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean),
  show: (process.env.FUZZ_SHOW ?? "")
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean),
};

// Before the service reads its configuration: loopback proxy destinations allowed (the fixtures' destination
// is on this machine), short synchronous reacts, the test clock route on, and quiet logs.
Object.assign(process.env, {
  SVC_PROXY_ALLOW_PRIVATE: "1",
  SVC_SYNC_REACT_TIMEOUT_MS: process.env.SVC_SYNC_REACT_TIMEOUT_MS ?? "5000",
  SVC_CALLBACK_RETRY_BASE_SECONDS: "900",
  ...(process.env.FUZZ_LOGS === "1" ? {} : { LOG_LEVEL: "ERROR", POWERTOOLS_LOG_LEVEL: "ERROR" }),
});
// The service's error lines name what failed inside a 5xx; without FUZZ_LOGS=1 they are kept, not printed.
captureServiceLog(process.env.FUZZ_LOGS === "1");

const log = (line: string) => console.log(`[fuzz ${new Date().toISOString().slice(11, 19)}] ${line}`);

/** The proxies' destination: echoes what it got, always 200 (so every 4xx of /proxy is the service's). */
async function startDestination(): Promise<{ server: Server; url: string }> {
  const server = createServer((req, res) => {
    let size = 0;
    req.on("data", (chunk: Buffer) => {
      size += chunk.length;
    });
    req.on("end", () => {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify({ received_bytes: size, path: req.url }));
    });
  });
  await new Promise<void>((done) => server.listen(0, "127.0.0.1", done));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/fuzz/` };
}

function writeRoutes(): WriteRoute[] {
  const all = routeList.filter((r) =>
    (WRITE_METHODS as readonly string[]).includes(r.method),
  ) as WriteRoute[];
  if (settings.only.length === 0) return all;
  return all.filter((r) => settings.only.some((o) => o === r.operationId || o === r.path));
}

function routeSeed(operationId: string): number {
  const digest = createHash("sha256").update(`${settings.seed}:${operationId}`).digest();
  return digest.readUInt32BE(0) % 2 ** 31;
}

/** Round-robin over the routes, so that every batch holds every route. */
function generate(routes: WriteRoute[]): FuzzCase[][] {
  // A route's seed depends on its operation id, not its place: FUZZ_ROUTES replays the same cases.
  const perRoute = routes.map((route) =>
    fc.sample(caseArbitrary(route), { seed: routeSeed(route.operationId), numRuns: settings.runs }),
  );
  const cases: FuzzCase[] = [];
  for (let run = 0; run < settings.runs; run++)
    for (const list of perRoute) cases.push(list[run] as FuzzCase);
  const batches: FuzzCase[][] = [];
  for (let i = 0; i < cases.length; i += settings.batch) batches.push(cases.slice(i, i + settings.batch));
  return batches;
}

async function main(): Promise<number> {
  const routes = writeRoutes();
  if (routes.length === 0) throw new Error(`FUZZ_ROUTES matched no write route: ${settings.only.join(",")}`);
  const byId = new Map(routes.map((r) => [r.operationId, r]));
  const protoFlag = [...process.execArgv, process.env.NODE_OPTIONS ?? ""]
    .join(" ")
    .match(/--disable-proto=\w+/);
  log(
    `seed ${settings.seed} (FUZZ_SEED=${settings.seed} replays this run); ${settings.runs} cases per route`,
  );
  log(
    `node ${process.version}, ${protoFlag ? protoFlag[0] : "no --disable-proto (prototype pollution detectable)"}`,
  );
  log(`${routes.length} write routes, from the route table:`);
  for (const r of routes) log(`  ${r.method.padEnd(6)} ${r.path}  (${r.operationId}, auth ${r.auth})`);

  const { startDynamoDbLocal } = await import("#shared/local/dynamodb-local.ts");
  const { startLocalService } = await import("#functions/local.ts");
  const { config } = await import("#shared/config.ts");
  const dataDir = mkdtempSync(join(tmpdir(), "svc-fuzz-"));
  const destination = await startDestination();
  const dynamo = await startDynamoDbLocal();
  const rootKey = `key_root_fuzz_${settings.seed}_0000000000`;
  const service = await startLocalService({
    port: 0,
    rootKey,
    dataDir,
    // A throwaway key for throwaway data: inside the temporary directory, removed with it.
    masterKeyFile: join(dataDir, "master.key"),
    dynamodbEndpoint: dynamo.endpoint,
    testClock: true,
    tableName: "svc-fuzz",
  });
  const api = new Api(service.url, rootKey, dataDir);
  const tally = new Tally();
  const started = Date.now();
  try {
    // The canary: a tenant the fuzz never touches, with one token; read and written after each batch.
    const canary = await buildCanary(api);
    const baseline = prototypeSnapshot();
    const batches = generate(routes);
    log(
      `service at ${service.url}; ${batches.reduce((n, b) => n + b.length, 0)} cases in ${batches.length} batches`,
    );

    for (const [index, batch] of batches.entries()) {
      const fixtures: Fixtures = {
        A: await buildTenant(api, "A", destination.url),
        B: await buildTenant(api, "B", destination.url),
        rootKey,
        destinationUrl: destination.url,
        defaultBodyLimit: config().maxBodyBytes,
        revealerPatches: new Map(),
      };
      let next = 0;
      const inFlight = new Set<Suspect>();
      const suspects = new Set<Suspect>();
      const pollutions: string[] = [];
      const worker = async () => {
        while (next < batch.length) {
          const plan = batch[next++] as FuzzCase;
          const route = byId.get(plan.route) as WriteRoute;
          const request = prepare(plan, route, fixtures);
          const shown = reproducer(request, plan.key);
          const self: Suspect = { route: route.operationId, shown, plan, protoKeys: PROTO_KEYS.test(shown) };
          inFlight.add(self);
          markSent(request, fixtures);
          const answer = await send(service.url, request, settings.timeoutMs);
          request.context.secrets = secretsAfter(request, answer.status, fixtures);
          inFlight.delete(self);
          tally.count(route.operationId, answer.status);
          if (settings.show.includes(route.operationId))
            log(
              `${shown}\n      plan: ${describePlan(plan)}\n      -> ${answer.status} ${answer.text.slice(0, 1000)}`,
            );
          const violations = checkAnswer(answer, request.context);
          for (const violation of violations)
            if (violation.kind === "5xx") {
              const logged = loggedErrorFor(answer.text);
              if (logged) violation.detail += ` (service log: ${logged})`;
            }
          for (const violation of violations)
            tally.fail({
              route: route.operationId,
              violation,
              status: answer.status,
              reproducer: shown,
              plan,
            });
          const added = pollutionSince(baseline);
          if (added.length > 0) {
            cleanPollution(added);
            // The polluter is this request or one still in flight: each is replayed alone after the batch.
            for (const suspect of [self, ...inFlight]) if (suspect.protoKeys) suspects.add(suspect);
            pollutions.push(added.join(", "));
          }
        }
      };
      await Promise.all(Array.from({ length: settings.concurrency }, worker));
      if (pollutions.length > 0)
        await replaySuspects(service.url, [...suspects], fixtures, baseline, tally, pollutions);
      const canaryProblem = await checkCanary(api, canary, baseline);
      if (canaryProblem)
        tally.fail({
          route: "canary",
          violation: { kind: "canary", detail: `after batch ${index + 1}: ${canaryProblem}` },
          status: 0,
          reproducer: `batch ${index + 1} (FUZZ_SEED=${settings.seed})`,
          plan: batch[0] as FuzzCase,
        });
      log(
        `batch ${index + 1}/${batches.length}: ${tally.requests} requests, ${tally.failures} failures` +
          `${canaryProblem ? ` — CANARY: ${canaryProblem}` : ""}`,
      );
    }
  } finally {
    await service.stop().catch(() => undefined);
    await dynamo.stop().catch(() => undefined);
    destination.server.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
  console.log(summary(tally, routes));
  const seconds = (Date.now() - started) / 1000;
  console.log(
    `\n${tally.requests} fuzzed requests (+${api.requests} set-up and canary) in ${seconds.toFixed(0)} s; ` +
      `${tally.failures === 0 ? "PASS" : `FAIL (${tally.failures})`}; FUZZ_SEED=${settings.seed}`,
  );
  return tally.failures === 0 ? 0 : 1;
}

/**
 * Replays, one at a time, the requests in flight when the prototypes changed: those that change them again
 * alone are the failures, with their own reproducer (at most 30 replays per batch).
 */
async function replaySuspects(
  base: string,
  suspects: Suspect[],
  fixtures: Fixtures,
  baseline: Map<string, string[]>,
  tally: Tally,
  pollutions: string[],
): Promise<void> {
  let confirmed = 0;
  for (const suspect of suspects.slice(0, 30)) {
    const route = routeList.find((r) => r.operationId === suspect.route) as WriteRoute;
    const answer = await send(base, prepare(suspect.plan, route, fixtures), settings.timeoutMs);
    const added = pollutionSince(baseline);
    if (added.length === 0) continue;
    cleanPollution(added);
    confirmed += 1;
    tally.fail({
      route: suspect.route,
      violation: { kind: "prototype-pollution", detail: `${added.join(", ")} appeared (replayed alone)` },
      status: answer.status,
      reproducer: suspect.shown,
      plan: suspect.plan,
    });
  }
  if (confirmed === 0)
    tally.fail({
      route: "unknown",
      violation: {
        kind: "prototype-pollution",
        detail: `${pollutions[0]} appeared; no replayed request (of ${suspects.length}) did it alone`,
      },
      status: 0,
      reproducer: "(see the batch's requests with FUZZ_SHOW)",
      plan: suspects[0]?.plan ?? ({} as FuzzCase),
    });
}

/** A request in flight: if the prototypes change meanwhile, it may be the cause. */
interface Suspect {
  route: string;
  shown: string;
  plan: FuzzCase;
  protoKeys: boolean;
}
const PROTO_KEYS = /__proto__|constructor|prototype/;

interface Canary {
  readKey: string;
  writeKey: string;
  tokenId: string;
}

async function buildCanary(api: Api): Promise<Canary> {
  const tenant = await api.call<{ management_key: string }>(
    "POST",
    "/tenants",
    api.rootKey,
    { name: "canary" },
    201,
  );
  const app = (type: string, permissions: string[], rules: unknown[] = []) =>
    api.call<{ key: string }>(
      "POST",
      "/applications",
      tenant.management_key,
      { name: type, type, permissions, rules },
      201,
    );
  const reveal = [
    { priority: 1, container: "/", transform: "reveal", permissions: ["token:read", "token:delete"] },
  ];
  const readKey = (await app("private", ["token:read", "token:delete"], reveal)).key;
  const writeKey = (await app("public", ["token:create"])).key;
  const token = await api.call<{ id: string }>(
    "POST",
    "/tokens",
    writeKey,
    { type: "card", data: card(CARDS.canary) },
    201,
  );
  return { readKey, writeKey, tokenId: token.id };
}

type CanaryToken = { id: string; data?: { number?: string }; mask?: unknown; expires_at?: string };

/** What is wrong with the canary tenant now, if anything: its one token, read and written as at start. */
async function checkCanary(
  api: Api,
  canary: Canary,
  baseline: Map<string, string[]>,
): Promise<string | undefined> {
  const added = pollutionSince(baseline);
  if (added.length > 0) {
    cleanPollution(added);
    return `prototypes polluted: ${added.join(", ")}`;
  }
  try {
    const page = await api.call<{ data: CanaryToken[] }>("GET", "/tokens", canary.readKey, undefined, 200);
    const token = page.data.find((t) => t.id === canary.tokenId);
    if (page.data.length !== 1 || token?.data?.number !== CARDS.canary || token.expires_at !== undefined)
      return `GET /tokens answered ${JSON.stringify(page).slice(0, 300)}`;
    const created = await api.call<CanaryToken>(
      "POST",
      "/tokens",
      canary.writeKey,
      { type: "card", data: card(CARDS.canary) },
      201,
    );
    if (created.expires_at !== undefined || JSON.stringify(created).includes(CARDS.canary))
      return `POST /tokens answered ${JSON.stringify(created).slice(0, 300)}`;
    // Back to one token, for the next check.
    await api.call("DELETE", `/tokens/${created.id}`, canary.readKey, undefined, 204);
    return undefined;
  } catch (error) {
    return error instanceof Error ? error.message : String(error);
  }
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    console.error("fuzz failed to run:", error);
    process.exit(2);
  },
);
