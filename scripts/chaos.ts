/**
 * `npm run chaos`: `npm start` under load while faults are injected at random moments (docs/operations.md#chaos).
 *
 * 16 writers create tokens, each write with its own SVC-IDEMPOTENCY-KEY, and retry a write that got no answer,
 * a 5xx, a 429 or an "in progress" 409 with the same key and body, as a careful client does. Meanwhile, in a
 * random order, at random moments, five faults hit the service:
 *   power-cut      SIGKILL to the whole process group (npm, node, Java, the sandbox): a power cut
 *   kill-api       SIGKILL to the API process alone (its children must follow it)
 *   sigterm-api    SIGTERM to the API process (drain: the requests in flight must all be answered)
 *   kill-dynamodb  SIGKILL to DynamoDB Local under a live API (503s, then the supervisor restarts it)
 *   sigterm-npm    SIGTERM to the npm process, as a supervisor sends it (drain, whole tree stops)
 * The service is started again (same port, data and master key) whenever a fault stopped it. At the end every
 * acknowledged write is read back, and the tenant's tokens are listed:
 *   acknowledged   writes answered 201
 *   verified       read back with the very data written
 *   lost           acknowledged but not found
 *   corrupt        found with other data
 *   duplicated     extra tokens of one write (a retry that took effect twice)
 * and, for each SIGTERM, how many requests were in flight at the signal and how many of those were answered.
 * It also checks that no process of a stopped service outlived it.
 *
 * Environment: CHAOS_WRITERS (16), CHAOS_LOAD_S (10: load between faults, at random 0.5 to 1.5 times),
 * CHAOS_FAULTS (all five, comma-separated, in random order), CHAOS_ROUNDS (1: the five faults this many times),
 * CHAOS_SEED (random: fixes the order and moments). Exit 1 when anything was lost, corrupt or duplicated,
 * a request in flight at SIGTERM went unanswered, or a process outlived its service.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { descendants } from "#test/support/process-tree.ts";
import { post } from "./api-call.ts";
import { type Attempt, Load, verify } from "./chaos/load.ts";
import { gone, type ServiceUnderTest, startService } from "./chaos/service.ts";

const FAULTS = ["power-cut", "kill-api", "sigterm-api", "kill-dynamodb", "sigterm-npm"] as const;
type Fault = (typeof FAULTS)[number];

const writers = Number(process.env.CHAOS_WRITERS ?? 16);
const loadSeconds = Number(process.env.CHAOS_LOAD_S ?? 10);
const rounds = Number(process.env.CHAOS_ROUNDS ?? 1);
const chosen = (process.env.CHAOS_FAULTS?.split(",") ?? [...FAULTS]) as Fault[];
let seed = Number(process.env.CHAOS_SEED ?? Math.floor(Math.random() * 2 ** 31));
const initialSeed = seed;
/** A small seeded generator (mulberry32): the same CHAOS_SEED gives the same order and moments. */
function random(): number {
  seed = (seed + 0x6d2b79f5) | 0;
  let t = seed;
  t = Math.imul(t ^ (t >>> 15), t | 1);
  t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
}
const shuffled = <T>(items: T[]): T[] =>
  items
    .map((item) => ({ item, key: random() }))
    .sort((a, b) => a.key - b.key)
    .map(({ item }) => item);

const started = Date.now();
const log = (line: string) =>
  console.log(`${((Date.now() - started) / 1000).toFixed(1).padStart(6)} s  ${line}`);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const server = createServer();
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      server.close(() => resolve(typeof address === "object" && address ? address.port : 0));
    });
  });
}

interface SigtermFigure {
  fault: Fault;
  inFlight: number;
  answered: number;
  unanswered: string[];
}

async function main() {
  const dataDir = mkdtempSync(join(tmpdir(), "svc-chaos-"));
  const options = { dataDir, configHome: join(dataDir, "config"), port: await freePort(), log };
  log(`seed ${initialSeed} (CHAOS_SEED=${initialSeed} replays the order and moments); ${writers} writers`);
  let service: ServiceUnderTest = await startService(options);
  log(`service up at ${service.url}`);
  const tenant = await post<{ management_key: string }>(service.url, "/tenants", service.rootKey, {
    name: "Chaos",
  });
  const app = await post<{ key: string }>(service.url, "/applications", tenant.management_key, {
    name: "writer",
    type: "private",
    permissions: ["token:create", "token:read"],
    rules: [
      {
        description: "all",
        priority: 1,
        container: "/",
        transform: "reveal",
        permissions: ["token:create", "token:read"],
      },
    ],
  });

  const load = new Load({ url: service.url, key: app.key, writers, retryForMs: 120_000 });
  load.start();
  const sigterms: SigtermFigure[] = [];
  const orphans: string[] = [];
  const plan = Array.from({ length: rounds }, () => shuffled(chosen)).flat();
  log(`faults: ${plan.join(", ")}`);

  for (const fault of plan) {
    await sleep(loadSeconds * 1000 * (0.5 + random()));
    const { npm, api: apiPid, java } = service.pids();
    const tree = descendants(npm);
    log(`${fault} (npm ${npm}, api ${apiPid}, java ${java}); ${load.inFlight.size} requests in flight`);
    let caught: Attempt[] = [];
    switch (fault) {
      case "power-cut":
        process.kill(-npm, "SIGKILL");
        break;
      case "kill-api":
        if (apiPid) process.kill(apiPid, "SIGKILL");
        break;
      case "sigterm-api":
        caught = [...load.inFlight];
        if (apiPid) process.kill(apiPid, "SIGTERM");
        break;
      case "kill-dynamodb":
        if (java) process.kill(java, "SIGKILL");
        break;
      case "sigterm-npm":
        caught = [...load.inFlight];
        process.kill(npm, "SIGTERM");
        break;
    }
    if (fault === "kill-dynamodb") {
      // The API stays up; the supervisor brings DynamoDB Local back on the same port.
      const restarts = (service.output().match(/DynamoDB Local restarted/g) ?? []).length;
      const deadline = Date.now() + 60_000;
      while ((service.output().match(/DynamoDB Local restarted/g) ?? []).length === restarts) {
        if (Date.now() > deadline) throw new Error("DynamoDB Local was not restarted within 60 s");
        await sleep(100);
      }
      continue;
    }
    await service.exited;
    // Every process of the stopped service, Java and the sandbox included, must be gone.
    const left = await gone(tree, 15_000);
    if (left.length) orphans.push(`${fault}: ${left.join(", ")}`);
    if (caught.length) {
      const unanswered = caught.filter((attempt) => attempt.answered === undefined);
      sigterms.push({
        fault,
        inFlight: caught.length,
        answered: caught.length - unanswered.length,
        unanswered: unanswered.map((a) => a.failed ?? "no answer"),
      });
      log(
        `  ${caught.length} requests in flight at the signal, ${caught.length - unanswered.length} answered`,
      );
    }
    service = await startService(options);
    log("  service up again");
  }

  await sleep(loadSeconds * 1000);
  log("stopping the load (writes under way are retried to their end)");
  await load.stop();
  log("verifying");
  const verdict = await verify(service.url, app.key, load.writes);
  process.kill(service.npm.pid as number, "SIGTERM");
  await service.exited;

  const inFlight = sigterms.reduce((sum, s) => sum + s.inFlight, 0);
  const answered = sigterms.reduce((sum, s) => sum + s.answered, 0);
  console.log("");
  console.log(`seed             ${initialSeed}`);
  console.log(`faults           ${plan.join(", ")}`);
  console.log(`writes           ${verdict.writes} (${verdict.retried} retried at least once)`);
  console.log(`acknowledged     ${verdict.acknowledged}`);
  console.log(`verified         ${verdict.verified}`);
  console.log(`lost             ${verdict.lost}`);
  console.log(`duplicated       ${verdict.duplicated}`);
  console.log(`corrupt          ${verdict.corrupt}`);
  console.log(`refused (4xx)    ${verdict.refused}`);
  console.log(`abandoned        ${verdict.abandoned}`);
  const answers = [...load.answers].sort(([a], [b]) => a.localeCompare(b));
  console.log(`attempts         ${answers.map(([outcome, n]) => `${outcome}: ${n}`).join(", ")}`);
  console.log(`in flight at SIGTERM: ${inFlight}, answered: ${answered}`);
  for (const s of sigterms)
    console.log(
      `  ${s.fault}: ${s.answered}/${s.inFlight}${s.unanswered.length ? ` (${s.unanswered.join("; ")})` : ""}`,
    );
  console.log(`orphans          ${orphans.length ? orphans.join("; ") : "none"}`);
  rmSync(dataDir, { recursive: true, force: true });
  const failed =
    verdict.lost + verdict.corrupt + verdict.duplicated + verdict.abandoned > 0 ||
    answered < inFlight ||
    orphans.length > 0;
  process.exit(failed ? 1 : 0);
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.stack : error);
  process.exit(1);
});
