/**
 * `npm run fuzz`: a property-based fuzz (fast-check) of every write route of the route table, against the
 * local service started in this process on its own in-memory DynamoDB Local. See docs/fuzzing.md.
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
import { checkAnswer, prototypeSnapshot, takePollution } from "./fuzz/check.ts";
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
// is on this machine), short synchronous reacts, and quiet logs.
Object.assign(process.env, {
  SVC_PROXY_ALLOW_PRIVATE: "1",
  SVC_SYNC_REACT_TIMEOUT_MS: process.env.SVC_SYNC_REACT_TIMEOUT_MS ?? "5000",
  SVC_CALLBACK_RETRY_BASE_SECONDS: "900",
  ...(process.env.FUZZ_LOGS === "1" ? {} : { LOG_LEVEL: "ERROR", POWERTOOLS_LOG_LEVEL: "ERROR" }),
});

const log = (line: string) => console.log(`[fuzz ${new Date().toISOString().slice(11, 19)}] ${line}`);
const tally = new Tally();
/** A case as sent: while it is in flight, it may be what changes the prototypes. */
type Sent = { route: WriteRoute; plan: FuzzCase; shown: string };

async function main(): Promise<number> {
  const routes = routeList.filter(
    (r) =>
      (WRITE_METHODS as readonly string[]).includes(r.method) &&
      (settings.only.length === 0 || settings.only.some((o) => o === r.operationId || o === r.path)),
  ) as WriteRoute[];
  if (routes.length === 0) throw new Error(`FUZZ_ROUTES matched no write route: ${settings.only.join(",")}`);
  const protoFlag = [...process.execArgv, process.env.NODE_OPTIONS].join(" ").match(/--disable-proto=\w+/);
  log(`seed ${settings.seed} (FUZZ_SEED=${settings.seed} replays it); ${settings.runs} cases per route`);
  log(`node ${process.version}, ${protoFlag?.[0] ?? "no --disable-proto (prototype pollution detectable)"}`);
  log(`${routes.length} write routes, from the route table:`);
  for (const r of routes) {
    const example = exampleFor(r) ? "" : " no example";
    log(`  ${r.method.padEnd(6)} ${r.path}  (${r.operationId}, auth ${r.auth})${example}`);
  }

  // The service's error lines name what failed inside a 5xx; without FUZZ_LOGS=1 they are kept, not printed.
  await captureServiceErrors(process.env.FUZZ_LOGS === "1");
  const { startDynamoDbLocal } = await import("#shared/local/dynamodb-local.ts");
  const { startLocalService } = await import("#functions/local.ts");
  const { config } = await import("#shared/config.ts");
  const dataDir = mkdtempSync(join(tmpdir(), "svc-fuzz-"));
  // The proxies' destination: echoes the path it got, always 200 (so every 4xx of /proxy is the service's).
  const destination = createServer((req, res) => {
    const json = { "content-type": "application/json" };
    req.resume().on("end", () => res.writeHead(200, json).end(JSON.stringify({ path: req.url })));
  });
  await new Promise<void>((done) => destination.listen(0, "127.0.0.1", done));
  const destinationUrl = `http://127.0.0.1:${(destination.address() as AddressInfo).port}/fuzz/`;
  const dynamo = await startDynamoDbLocal();
  const rootKey = `key_root_fuzz_${settings.seed}_0000000000`;
  const local = { port: 0, rootKey, dataDir, tableName: "svc-fuzz", testClock: true };
  // A throwaway master key for throwaway data: inside the temporary directory, removed with it.
  const masterKeyFile = join(dataDir, "master.key");
  const service = await startLocalService({ ...local, dynamodbEndpoint: dynamo.endpoint, masterKeyFile });
  const run = {
    rootKey,
    destinationUrl,
    outboxDir: join(dataDir, "outbox"),
    kmsDir: `${masterKeyFile}.customer-keys`, // the local default (shared/config.ts)
    defaultBodyLimit: config().maxBodyBytes,
  };
  const api = new Api(service.url);
  const started = Date.now();
  try {
    const checkCanary = await canary(api, rootKey);
    const baseline = prototypeSnapshot();
    // Round-robin over the routes, so that every batch holds every route. A route's seed depends on its
    // operation id, not its place: FUZZ_ROUTES replays the same cases.
    const perRoute = routes.map((route) => {
      const hash = createHash("sha256").update(`${settings.seed}:${route.operationId}`).digest();
      const seed = hash.readUInt32BE(0) % 2 ** 31;
      const plans = fc.sample(caseArbitrary(route), { seed, numRuns: settings.runs });
      return plans.map((plan) => ({ route, plan }));
    });
    const all = [...Array(settings.runs).keys()].flatMap((i) => perRoute.flatMap((cases) => cases[i] ?? []));
    // Deletions go last in a batch, so that the fixtures serve its other cases; the tenant's own the very
    // last, as it turns every later request of the batch into a 401 (a stable sort keeps the rest in order).
    const rank = (r: WriteRoute) => (r.method !== "DELETE" ? 0 : r.path === "/tenants/self" ? 2 : 1);
    const batches = Math.ceil(all.length / settings.batch);
    log(`service at ${service.url}; ${all.length} cases in ${batches} batches`);
    for (let index = 0; index < batches; index++) {
      const batch = all.slice(index * settings.batch, (index + 1) * settings.batch);
      batch.sort((a, b) => rank(a.route) - rank(b.route));
      const [A, B] = [await buildTenant(api, run, "A"), await buildTenant(api, run, "B")];
      const fixtures: Fixtures = { ...run, A, B, revealerPatches: new Map() };
      const inFlight = new Set<Sent>();
      const suspects = new Set<Sent>();
      let polluted = "";
      const worker = async () => {
        for (let next = batch.shift(); next; next = batch.shift()) {
          const request = prepare(next.plan, next.route, fixtures);
          const sent = { ...next, shown: reproducer(request) };
          inFlight.add(sent);
          const answer = await exchange(service.url, request, fixtures, settings.timeoutMs);
          inFlight.delete(sent);
          const route = next.route.operationId;
          tally.count(route, answer.status);
          for (const { kind, detail } of checkAnswer(answer, request.context)) {
            const logged = kind === "5xx" && loggedErrorFor(answer.text);
            const failure = { route, kind, status: answer.status, shown: sent.shown, plan: next.plan };
            tally.fail({ ...failure, detail: logged ? `${detail} (service log: ${logged})` : detail });
          }
          const added = takePollution(baseline);
          if (added.length === 0) continue;
          polluted ||= added.join(", ");
          // The polluter is this request or one still in flight: each is replayed alone after the batch.
          for (const s of [sent, ...inFlight])
            if (/__proto__|constructor|prototype/.test(s.shown)) suspects.add(s);
        }
      };
      await Promise.all(Array.from({ length: settings.concurrency }, worker));
      // The requests in flight when the prototypes changed, replayed one at a time: those that change them
      // again alone are the failures, with their own reproducer (at most 30 replays per batch).
      let confirmed = 0;
      for (const s of polluted ? [...suspects].slice(0, 30) : []) {
        const { status } = await send(service.url, prepare(s.plan, s.route, fixtures), settings.timeoutMs);
        const added = takePollution(baseline);
        if (added.length === 0) continue;
        confirmed += 1;
        const detail = `${added.join(", ")} appeared (replayed alone)`;
        tally.fail({ ...s, route: s.route.operationId, kind: "prototype-pollution", detail, status });
      }
      if (polluted && confirmed === 0) {
        const detail = `${polluted} appeared; no replayed request (of ${suspects.size}) did it alone`;
        const shown = `batch replay: FUZZ_SEED=${settings.seed} with node --import tsx (no --disable-proto)`;
        tally.fail({ route: "unknown", kind: "prototype-pollution", detail, status: 0, shown });
      }
      const added = takePollution(baseline);
      const problem = added.length > 0 ? `prototypes polluted: ${added.join(", ")}` : await checkCanary();
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
  const counts = `${tally.requests} fuzzed requests (+${api.requests} set-up and canary)`;
  const verdict = tally.failures === 0 ? "PASS" : `FAIL (${tally.failures})`;
  const seconds = ((Date.now() - started) / 1000).toFixed(0);
  console.log(`\n${counts} in ${seconds} s; ${verdict}; FUZZ_SEED=${settings.seed}`);
  return tally.failures === 0 ? 0 : 1;
}

type CanaryToken = { id: string; data?: { number?: string }; expires_at?: string };

/**
 * The canary: a tenant the fuzz never touches, with one token. Its check says what is wrong with it now, if
 * anything: its one token read (revealed, no `expires_at`) and a token created (masked), as at start.
 */
async function canary(api: Api, rootKey: string): Promise<() => Promise<string | undefined>> {
  const owner = (await api.post("/tenants", rootKey, { name: "canary" })).management_key;
  const permissions = ["token:read", "token:delete"];
  const rules = [{ priority: 1, container: "/", transform: "reveal", permissions }];
  const reader = await api.post("/applications", owner, { name: "r", type: "private", permissions, rules });
  const publicApp = { name: "w", type: "public", permissions: ["token:create"] };
  const writer = await api.post("/applications", owner, publicApp);
  const body = { type: "card", data: card(CARDS.canary) };
  const { id } = await api.post("/tokens", writer.key, body);
  return async () => {
    try {
      const page = await api.call<{ data: CanaryToken[] }>("GET", "/tokens", reader.key, undefined, 200);
      const [token, ...more] = page.data;
      if (token?.id !== id || token.data?.number !== CARDS.canary || "expires_at" in token || more.length)
        return `GET /tokens answered ${JSON.stringify(page).slice(0, 300)}`;
      const created = await api.post<CanaryToken>("/tokens", writer.key, body);
      if (created.expires_at !== undefined || JSON.stringify(created).includes(CARDS.canary))
        return `POST /tokens answered ${JSON.stringify(created).slice(0, 300)}`;
      await api.call("DELETE", `/tokens/${created.id}`, reader.key, undefined, 204); // back to one token
    } catch (error) {
      return error instanceof Error ? error.message : String(error);
    }
  };
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    console.error("fuzz failed to run:", error);
    process.exit(2);
  },
);
