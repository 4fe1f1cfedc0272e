/**
 * `npm run fuzz`: a property-based fuzz (fast-check) of every write route of the route table, against the local
 * service started in this process on its own in-memory DynamoDB Local. See docs/fuzzing.md (settings, oracle).
 */
import { createHash } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import { routeList } from "#shared/api/index.ts";
import { caseArbitrary, type FuzzCase, WRITE_METHODS, type WriteRoute } from "./fuzz/cases.ts";
import { checkAnswer, type PrototypeBaseline, prototypeSnapshot, takePollution } from "./fuzz/check.ts";
import { exampleFor } from "./fuzz/examples.ts";
import { captureServiceErrors, loggedErrorFor, reproducer, summary, Tally } from "./fuzz/report.ts";
import { exchange, type Fixtures, prepare, send } from "./fuzz/request.ts";
import { Api, buildTenant, CARDS, card } from "./fuzz/world.ts";
import { intEnv } from "./int-env.ts";

const settings = {
  seed: intEnv("FUZZ_SEED", Math.floor(Math.random() * 2 ** 31), 0, 2 ** 31 - 1),
  runs: intEnv("FUZZ_RUNS", 256, 1, 1_000_000),
  batch: intEnv("FUZZ_BATCH", 500, 10, 1_000_000),
  concurrency: intEnv("FUZZ_CONCURRENCY", 6, 1, 256),
  timeoutMs: intEnv("FUZZ_TIMEOUT_MS", 60_000, 1_000, 600_000),
  only: (process.env.FUZZ_ROUTES ?? "").split(",").flatMap((s) => s.trim() || []),
};

// Before the service reads its configuration: loopback proxy destinations allowed (the fixtures' destination
// is on this machine), short synchronous reacts, the test clock route on, and quiet logs.
Object.assign(process.env, {
  SVC_PROXY_ALLOW_PRIVATE: "1",
  SVC_SYNC_REACT_TIMEOUT_MS: process.env.SVC_SYNC_REACT_TIMEOUT_MS ?? "5000",
  SVC_CALLBACK_RETRY_BASE_SECONDS: "900",
  ...(process.env.FUZZ_LOGS === "1" ? {} : { LOG_LEVEL: "ERROR", POWERTOOLS_LOG_LEVEL: "ERROR" }),
});

const log = (line: string) => console.log(`[fuzz ${new Date().toISOString().slice(11, 19)}] ${line}`);

/** A case as sent: while it is in flight, it may be the cause of a change to the prototypes. */
type Sent = { route: WriteRoute; plan: FuzzCase; shown: string };

async function main(): Promise<number> {
  const routes = routeList.filter(
    (r) =>
      (WRITE_METHODS as readonly string[]).includes(r.method) &&
      (settings.only.length === 0 || settings.only.some((o) => o === r.operationId || o === r.path)),
  ) as WriteRoute[];
  if (routes.length === 0) throw new Error(`FUZZ_ROUTES matched no write route: ${settings.only.join(",")}`);
  const protoFlag = [...process.execArgv, process.env.NODE_OPTIONS].join(" ").match(/--disable-proto=\w+/);
  log(
    `seed ${settings.seed} (FUZZ_SEED=${settings.seed} replays this run); ${settings.runs} cases per route`,
  );
  log(`node ${process.version}, ${protoFlag?.[0] ?? "no --disable-proto (prototype pollution detectable)"}`);
  log(`${routes.length} write routes, from the route table:`);
  for (const r of routes)
    log(
      `  ${r.method.padEnd(6)} ${r.path}  (${r.operationId}, auth ${r.auth})${exampleFor(r) ? "" : " no example"}`,
    );

  // The service's error lines name what failed inside a 5xx; without FUZZ_LOGS=1 they are kept, not printed.
  await captureServiceErrors(process.env.FUZZ_LOGS === "1");
  const { startDynamoDbLocal } = await import("#shared/local/dynamodb-local.ts");
  const { startLocalService } = await import("#functions/local.ts");
  const { config } = await import("#shared/config.ts");
  const dataDir = mkdtempSync(join(tmpdir(), "svc-fuzz-"));
  // The proxies' destination: echoes what it got, always 200 (so every 4xx of /proxy is the service's).
  const destination = createServer((req, res) => {
    req
      .resume()
      .on("end", () =>
        res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ path: req.url })),
      );
  });
  await new Promise<void>((done) => destination.listen(0, "127.0.0.1", done));
  const destinationUrl = `http://127.0.0.1:${(destination.address() as AddressInfo).port}/fuzz/`;
  const dynamo = await startDynamoDbLocal();
  const rootKey = `key_root_fuzz_${settings.seed}_0000000000`;
  // A throwaway master key for throwaway data: inside the temporary directory, removed with it.
  const masterKeyFile = join(dataDir, "master.key");
  const options = {
    port: 0,
    rootKey,
    dataDir,
    dynamodbEndpoint: dynamo.endpoint,
    testClock: true,
    masterKeyFile,
  };
  const service = await startLocalService({ ...options, tableName: "svc-fuzz" });
  const api = new Api(service.url, rootKey);
  const tally = new Tally();
  const started = Date.now();
  try {
    const canary = await buildCanary(api);
    const baseline = prototypeSnapshot();
    // Round-robin over the routes, so that every batch holds every route. A route's seed depends on its
    // operation id, not its place: FUZZ_ROUTES replays the same cases.
    const perRoute = routes.map((route) => {
      const hash = createHash("sha256").update(`${settings.seed}:${route.operationId}`).digest();
      return fc.sample(caseArbitrary(route), {
        seed: hash.readUInt32BE(0) % 2 ** 31,
        numRuns: settings.runs,
      });
    });
    const cases = Array.from({ length: settings.runs }, (_, run) =>
      perRoute.map((list) => list[run] as FuzzCase),
    ).flat();
    const byId = new Map(routes.map((r) => [r.operationId, r]));
    // Deletions go last in a batch, so that the fixtures serve its other cases; the tenant's own the very last,
    // since it turns every later request of the batch into a 401 (a stable sort keeps the rest in order).
    const rank = ({ method, path }: WriteRoute) =>
      method !== "DELETE" ? 0 : path === "/tenants/self" ? 2 : 1;
    const batches = Math.ceil(cases.length / settings.batch);
    log(`service at ${service.url}; ${cases.length} cases in ${batches} batches`);

    for (let index = 0; index < batches; index++) {
      const batch = cases
        .slice(index * settings.batch, (index + 1) * settings.batch)
        .map((plan) => ({ plan, route: byId.get(plan.route) as WriteRoute }))
        .sort((a, b) => rank(a.route) - rank(b.route));
      const fixtures: Fixtures = {
        A: await buildTenant(api, "A", destinationUrl),
        B: await buildTenant(api, "B", destinationUrl),
        rootKey,
        destinationUrl,
        defaultBodyLimit: config().maxBodyBytes,
        revealerPatches: new Map(),
      };
      const inFlight = new Set<Sent>();
      const suspects = new Set<Sent>();
      let polluted: string | undefined;
      const worker = async () => {
        for (let next = batch.shift(); next; next = batch.shift()) {
          const { plan, route } = next;
          const request = prepare(plan, route, fixtures);
          const sent = { route, plan, shown: reproducer(request) };
          inFlight.add(sent);
          const answer = await exchange(service.url, request, fixtures, settings.timeoutMs);
          inFlight.delete(sent);
          tally.count(route.operationId, answer.status);
          for (const { kind, detail } of checkAnswer(answer, request.context)) {
            const logged = kind === "5xx" && loggedErrorFor(answer.text);
            const failure = { ...sent, route: route.operationId, status: answer.status, kind };
            tally.fail({ ...failure, detail: logged ? `${detail} (service log: ${logged})` : detail });
          }
          const added = takePollution(baseline);
          // The polluter is this request or one still in flight: each is replayed alone after the batch.
          for (const s of added.length > 0 ? [sent, ...inFlight] : [])
            if (/__proto__|constructor|prototype/.test(s.shown)) suspects.add(s);
          polluted ??= added.length > 0 ? added.join(", ") : undefined;
        }
      };
      await Promise.all(Array.from({ length: settings.concurrency }, worker));
      if (polluted) await replaySuspects(service.url, [...suspects], fixtures, baseline, tally, polluted);
      const problem = await checkCanary(api, canary, baseline);
      const shown = `batch ${index + 1} (FUZZ_SEED=${settings.seed})`;
      if (problem) tally.fail({ route: "canary", kind: "canary", detail: problem, status: 0, shown });
      log(`batch ${index + 1}/${batches}: ${tally.requests} requests, ${tally.failures} failures`);
    }
  } finally {
    await service.stop().catch(() => undefined);
    await dynamo.stop().catch(() => undefined);
    destination.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
  console.log(summary(tally, routes));
  const seconds = ((Date.now() - started) / 1000).toFixed(0);
  const verdict = tally.failures === 0 ? "PASS" : `FAIL (${tally.failures})`;
  const counts = `${tally.requests} fuzzed requests (+${api.requests} set-up and canary) in ${seconds} s`;
  console.log(`\n${counts}; ${verdict}; FUZZ_SEED=${settings.seed}`);
  return tally.failures === 0 ? 0 : 1;
}

/**
 * Replays, one at a time, the requests in flight when the prototypes changed: those that change them again
 * alone are the failures, with their own reproducer (at most 30 replays per batch).
 */
async function replaySuspects(
  base: string,
  suspects: Sent[],
  fixtures: Fixtures,
  baseline: PrototypeBaseline,
  tally: Tally,
  polluted: string,
): Promise<void> {
  let confirmed = 0;
  for (const { route, plan, shown } of suspects.slice(0, 30)) {
    const { status } = await send(base, prepare(plan, route, fixtures), settings.timeoutMs);
    const added = takePollution(baseline);
    if (added.length === 0) continue;
    confirmed += 1;
    const detail = `${added.join(", ")} appeared (replayed alone)`;
    tally.fail({ route: route.operationId, kind: "prototype-pollution", detail, status, shown, plan });
  }
  if (confirmed > 0) return;
  const detail = `${polluted} appeared; no replayed request (of ${suspects.length}) did it alone`;
  const shown = `batch replay: FUZZ_SEED=${settings.seed} with node --import tsx (no --disable-proto)`;
  tally.fail({ route: "unknown", kind: "prototype-pollution", detail, status: 0, shown });
}

type CanaryToken = { id: string; data?: { number?: string }; expires_at?: string };

/** The canary: a tenant the fuzz never touches, with one token; read and written after each batch. */
async function buildCanary(api: Api) {
  const owner = (await api.post("/tenants", api.rootKey, { name: "canary" })).management_key;
  const permissions = ["token:read", "token:delete"];
  const rules = [{ priority: 1, container: "/", transform: "reveal", permissions }];
  const reader = await api.post("/applications", owner, { name: "r", type: "private", permissions, rules });
  const writer = await api.post("/applications", owner, {
    ...{ name: "w", type: "public", permissions: ["token:create"], rules: [] },
  });
  const token = await api.post("/tokens", writer.key, { type: "card", data: card(CARDS.canary) });
  return { readKey: reader.key, writeKey: writer.key, tokenId: token.id };
}

/** What is wrong with the canary tenant now, if anything: its one token, read and written as at start. */
async function checkCanary(
  api: Api,
  canary: Awaited<ReturnType<typeof buildCanary>>,
  baseline: PrototypeBaseline,
) {
  const added = takePollution(baseline);
  if (added.length > 0) return `prototypes polluted: ${added.join(", ")}`;
  try {
    const page = await api.call<{ data: CanaryToken[] }>("GET", "/tokens", canary.readKey, undefined, 200);
    const token = page.data.find((t) => t.id === canary.tokenId);
    if (page.data.length !== 1 || token?.data?.number !== CARDS.canary || token.expires_at !== undefined)
      return `GET /tokens answered ${JSON.stringify(page).slice(0, 300)}`;
    const body = { type: "card", data: card(CARDS.canary) };
    const created = await api.post<CanaryToken>("/tokens", canary.writeKey, body);
    if (created.expires_at !== undefined || JSON.stringify(created).includes(CARDS.canary))
      return `POST /tokens answered ${JSON.stringify(created).slice(0, 300)}`;
    // Back to one token, for the next check.
    await api.call("DELETE", `/tokens/${created.id}`, canary.readKey, undefined, 204);
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
