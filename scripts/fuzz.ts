/**
 * `npm run fuzz`: a property-based fuzz (fast-check) of every write route of the route table, against the
 * local service started in this process on its own in-memory DynamoDB Local. See docs/fuzzing.md.
 */
import { createHash } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import { routeList } from "#shared/api/index.ts";
import { call, post } from "./api-call.ts";
import { startDestination } from "./bench/destination.ts";
import { caseArbitrary, WRITE_METHODS, type WriteRoute } from "./fuzz/cases.ts";
import { checkAnswer, prototypeSnapshot, takePollution } from "./fuzz/check.ts";
import { exampleFor } from "./fuzz/examples.ts";
import { reproducer, summary, Tally } from "./fuzz/report.ts";
import { type Fixtures, prepare, send } from "./fuzz/request.ts";
import { buildTenant, CARDS, card } from "./fuzz/world.ts";
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
  ...(process.env.FUZZ_LOGS === "1" ? {} : { LOG_LEVEL: "SILENT", POWERTOOLS_LOG_LEVEL: "SILENT" }),
});

const log = (line: string) => console.log(`[fuzz ${new Date().toISOString().slice(11, 19)}] ${line}`);
const tally = new Tally();

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
  const bare = routes.flatMap((r) => (exampleFor(r) ? [] : r.operationId));
  log(
    `${routes.length} write routes from the route table; without a valid example: ${bare.join(", ") || "none"}`,
  );
  const { startDynamoDbLocal } = await import("#shared/local/dynamodb-local.ts");
  const { startLocalService } = await import("#functions/local.ts");
  const { config } = await import("#shared/config.ts");
  const dataDir = mkdtempSync(join(tmpdir(), "svc-fuzz-"));
  // The proxies' destination answers 200 to everything: every 4xx of /proxy is the service's.
  const destination = await startDestination();
  const destinationUrl = `${destination.url}/fuzz/`;
  const dynamo = await startDynamoDbLocal();
  const rootKey = `key_root_fuzz_${settings.seed}_0000000000`;
  const local = { port: 0, rootKey, dataDir, tableName: "svc-fuzz", testClock: true };
  // A throwaway master key for throwaway data: inside the temporary directory, removed with it.
  const masterKeyFile = join(dataDir, "master.key");
  const service = await startLocalService({ ...local, dynamodbEndpoint: dynamo.endpoint, masterKeyFile });
  const run = {
    url: service.url,
    rootKey,
    destinationUrl,
    outboxDir: join(dataDir, "outbox"),
    kmsDir: `${masterKeyFile}.customer-keys`, // the local default (shared/config.ts)
    defaultBodyLimit: config().maxBodyBytes,
  };
  const started = Date.now();
  try {
    const checkCanary = await canary(service.url, rootKey);
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
      const fixtures: Fixtures = { ...run, A: await buildTenant(run, "A"), B: await buildTenant(run, "B") };
      let inFlight = 0;
      const worker = async () => {
        for (let next = batch.shift(); next; next = batch.shift()) {
          const request = prepare(next.plan, next.route, fixtures);
          inFlight += 1;
          const answer = await send(service.url, request, settings.timeoutMs);
          inFlight -= 1;
          const route = next.route.operationId;
          const failure = { route, status: answer.status, shown: reproducer(request), plan: next.plan };
          tally.count(failure.route, answer.status);
          for (const violation of checkAnswer(answer, request.context))
            tally.fail({ ...failure, ...violation });
          // This request changed a prototype, or one still in flight did (FUZZ_CONCURRENCY=1 tells which).
          const added = takePollution(baseline);
          const detail = `${added.join(", ")} appeared; ${inFlight} other requests in flight`;
          if (added.length > 0) tally.fail({ ...failure, kind: "prototype-pollution", detail });
        }
      };
      await Promise.all(Array.from({ length: settings.concurrency }, worker));
      const added = takePollution(baseline);
      const problem = added.length > 0 ? `prototypes polluted: ${added.join(", ")}` : await checkCanary();
      const shown = `batch ${index + 1} (FUZZ_SEED=${settings.seed})`;
      if (problem) tally.fail({ route: "canary", kind: "canary", detail: problem, status: 0, shown });
      log(`batch ${index + 1}/${batches}: ${tally.requests} requests, ${tally.failures} failures`);
    }
  } finally {
    await service.stop().catch(() => undefined);
    await dynamo.stop().catch(() => undefined);
    await destination.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
  console.log(summary(tally, routes));
  const verdict = tally.failures === 0 ? "PASS" : `FAIL (${tally.failures})`;
  const seconds = ((Date.now() - started) / 1000).toFixed(0);
  console.log(`\n${tally.requests} fuzzed requests in ${seconds} s; ${verdict}; FUZZ_SEED=${settings.seed}`);
  return tally.failures === 0 ? 0 : 1;
}

type CanaryToken = { id: string; data?: { number?: string }; expires_at?: string };

/**
 * The canary: a tenant the fuzz never touches, with one token. Its check says what is wrong with it now, if
 * anything: its one token read (revealed, no `expires_at`) and a token created (masked), as at start.
 */
async function canary(url: string, rootKey: string): Promise<() => Promise<string | undefined>> {
  type Created = { id: string; key: string; management_key: string };
  const owner = (await post<Created>(url, "/tenants", rootKey, { name: "canary" })).management_key;
  const permissions = ["token:read", "token:delete"];
  const rules = [{ priority: 1, container: "/", transform: "reveal", permissions }];
  const reader = await post<Created>(url, "/applications", owner, {
    name: "r",
    type: "private",
    permissions,
    rules,
  });
  const publicApp = { name: "w", type: "public", permissions: ["token:create"] };
  const writer = await post<Created>(url, "/applications", owner, publicApp);
  const body = { type: "card", data: card(CARDS.canary) };
  const { id } = await post<Created>(url, "/tokens", writer.key, body);
  return async () => {
    try {
      const page = await call<{ data: CanaryToken[] }>(url, "GET", "/tokens", reader.key, undefined, 200);
      const [token, ...more] = page.data;
      if (token?.id !== id || token.data?.number !== CARDS.canary || "expires_at" in token || more.length)
        return `GET /tokens answered ${JSON.stringify(page).slice(0, 300)}`;
      const created = await post<CanaryToken>(url, "/tokens", writer.key, body);
      if (created.expires_at !== undefined || JSON.stringify(created).includes(CARDS.canary))
        return `POST /tokens answered ${JSON.stringify(created).slice(0, 300)}`;
      await call(url, "DELETE", `/tokens/${created.id}`, reader.key, undefined, 204); // back to one token
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
