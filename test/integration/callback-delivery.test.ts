import { randomBytes, randomUUID } from "node:crypto";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { DynamoDBDocumentClient } from "@aws-sdk/lib-dynamodb";
import { Webhook } from "standardwebhooks";
import { afterEach, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import { systemClock } from "#shared/adapters/clock.ts";
import { AuditItems } from "#shared/adapters/dynamodb/audit-items.ts";
import { DynamoAuditLogStore } from "#shared/adapters/dynamodb/audit-log-store.ts";
import { LocalJobQueue } from "#shared/adapters/local/local-job-queue.ts";
import { callbackDeps as composedCallbackDeps } from "#shared/composition/callbacks.ts";
import type { CallbackJob, ReactionOutcome, ReactionRunner } from "#shared/domain/reactors/callback-job.ts";
import { type CallbackDeps, MAX_ATTEMPTS, processCallbackJob } from "#shared/domain/reactors/callbacks.ts";
import { nodeEgress } from "#shared/egress/egress.ts";
import { reactionFailures } from "#shared/http/problem.ts";
import { logger } from "#shared/logger.ts";
import { TEST_TABLE, testDynamo } from "#test/support/dynamo.ts";
import { client, createTenant } from "#test/support/http.ts";
import { useService } from "#test/support/service.ts";

/*
 * The whole asynchronous path after react: the local queue (SQS semantics, retry delays shortened to a
 * 50 ms base), processCallbackJob, forward() and REAL receivers on 127.0.0.1, with the audit log in
 * DynamoDB Local. The reaction itself is a fake runner that, like the real one, runs once per request id.
 */

const secret = `whsec_${randomBytes(32).toString("base64")}`;
const SEALED = "c2VhbGVkLWFyZ3MtbWFya2Vy"; // stands for the sealed args; must never reach a dead letter
const RESULT_MARKER = "result-marker-7f3a";

let dynamo: DynamoDBDocumentClient;
let auditLog: DynamoAuditLogStore;

beforeAll(async () => {
  dynamo = await testDynamo();
  auditLog = new DynamoAuditLogStore(dynamo, TEST_TABLE, new AuditItems(TEST_TABLE, 1));
});

/** Runs each request once (later calls answer the stored outcome), as the ReactionRunner contract says. */
class FakeRunner implements ReactionRunner {
  calls = 0;
  executions = 0;
  private readonly outcomes = new Map<string, ReactionOutcome>();

  constructor(private readonly outcome: ReactionOutcome = { status: 200, body: { raw: RESULT_MARKER } }) {}

  async run(job: CallbackJob): Promise<ReactionOutcome> {
    this.calls += 1;
    const stored = this.outcomes.get(job.requestId);
    if (stored) return stored;
    this.executions += 1;
    this.outcomes.set(job.requestId, this.outcome);
    return this.outcome;
  }
}

interface Delivery {
  headers: http.IncomingHttpHeaders;
  body: string;
  verified: boolean;
}

interface Receiver {
  url: string;
  /** Every request that reached the receiver, answered or not. */
  deliveries: Delivery[];
  close(): Promise<void>;
}

/** A loopback receiver; `answer(n)` gives the status for the n-th request (from 1), or "hang" for none. */
async function receiver(answer: (n: number) => number | "hang", signingSecret = secret): Promise<Receiver> {
  const deliveries: Delivery[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      const body = Buffer.concat(chunks).toString("utf8");
      let verified = false;
      try {
        new Webhook(signingSecret).verify(body, req.headers as Record<string, string>);
        verified = true;
      } catch {
        verified = false;
      }
      deliveries.push({ headers: req.headers, body, verified });
      const status = answer(deliveries.length);
      if (status !== "hang") res.writeHead(status, { "content-type": "text/plain" }).end("ok");
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  const close = () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  return { url: `http://127.0.0.1:${port}/hooks/reactions?source=svc`, deliveries, close };
}

let dataDir: string;
let queue: LocalJobQueue;
let runner: FakeRunner;
let receivers: Receiver[];
let tenantId: string;
let reactorId: string;

const newReceiver = async (answer: (n: number) => number | "hang", signingSecret = secret) => {
  const r = await receiver(answer, signingSecret);
  receivers.push(r);
  return r;
};

function callbackDeps(overrides: Partial<CallbackDeps["delivery"]> = {}): CallbackDeps {
  return {
    runner,
    failures: reactionFailures,
    webhookSecrets: { secret: async () => secret },
    auditLog,
    clock: systemClock,
    egress: nodeEgress,
    delivery: { allowPrivate: true, timeoutMs: 300, ...overrides },
  };
}

function startQueue(deps: CallbackDeps): void {
  queue.start((job, attempt) => processCallbackJob(deps, job, attempt));
}

function newJob(callbackUrl: string): CallbackJob {
  return {
    requestId: randomUUID(),
    tenantId,
    reactorId,
    callbackUrl,
    timeoutMs: 10_000,
    sealedArgs: SEALED,
    actor: { type: "application", id: "app-callbacks" },
    enqueuedAt: new Date().toISOString(),
  };
}

async function auditMessages(): Promise<string[]> {
  const page = await auditLog.list(
    tenantId,
    { entityType: "reactor", entityId: reactorId },
    { page: 1, size: 50 },
  );
  return page.items.map((entry) => entry.message).sort();
}

beforeEach(() => {
  dataDir = mkdtempSync(join(tmpdir(), "svc-callbacks-"));
  queue = new LocalJobQueue({ dataDir, retryBaseSeconds: 0.05 });
  runner = new FakeRunner();
  receivers = [];
  tenantId = randomUUID();
  reactorId = randomUUID();
});

afterEach(async () => {
  await queue.stop();
  await Promise.all(receivers.map((r) => r.close()));
  rmSync(dataDir, { recursive: true, force: true });
  vi.restoreAllMocks();
});

describe("callback delivery", () => {
  it("delivers one signed webhook with the reaction's result, outside the request, and logs the attempt", async () => {
    const hook = await newReceiver(() => 204);
    // The webhook's time comes from its own clock port (real time by default: receivers check it against
    // theirs); stopped here, so the header and the payload are exact.
    const at = new Date(Math.floor(Date.now() / 1000) * 1000 + 123);
    startQueue({ ...callbackDeps(), webhookClock: { now: () => at } });
    const job = newJob(hook.url);

    await queue.enqueue(job);
    // The worker has not run yet: enqueue (inside react) only queues.
    expect(runner.calls).toBe(0);
    await queue.idle();

    expect(hook.deliveries).toHaveLength(1);
    const [delivery] = hook.deliveries as [Delivery];
    expect(delivery.verified).toBe(true);
    expect(delivery.headers["content-type"]).toBe("application/json");
    expect(delivery.headers["webhook-id"]).toBe(job.requestId);
    expect(delivery.headers["webhook-timestamp"]).toBe(String(Math.floor(at.getTime() / 1000)));
    const payload = JSON.parse(delivery.body);
    expect(payload).toEqual({
      type: "reactor.reaction.completed",
      timestamp: at.toISOString(),
      data: {
        request_id: job.requestId,
        reactor_id: reactorId,
        callback_url: job.callbackUrl,
        status: 200,
        body: { raw: RESULT_MARKER },
      },
    });
    expect(delivery.body).not.toContain(SEALED);
    expect(runner.executions).toBe(1);
    expect(await queue.deadLetters()).toEqual([]);

    const entries = (
      await auditLog.list(tenantId, { entityType: "reactor", entityId: reactorId }, { page: 1, size: 50 })
    ).items;
    expect(entries).toEqual([
      expect.objectContaining({
        entity_type: "reactor",
        entity_id: reactorId,
        operation: "invoke",
        actor_type: "application",
        actor_id: "app-callbacks",
        message: `Callback delivery attempt 1 for request ${job.requestId}: delivered (HTTP 204)`,
      }),
    ]);
    // Neither the URL (its path and query may hold secrets) nor the result is logged.
    expect(JSON.stringify(entries)).not.toMatch(/hooks\/reactions|source=svc|127\.0\.0\.1|result-marker/);
  });

  it("posts a failed reaction as reactor.reaction.failed with its problem", async () => {
    const problem = {
      type: "https://svc-vault.dev/problems/bad-request",
      title: "Bad Request",
      status: 400,
      detail: "x",
    };
    runner = new FakeRunner({ status: 400, body: problem });
    const hook = await newReceiver(() => 200);
    startQueue(callbackDeps());
    const job = newJob(hook.url);

    await queue.enqueue(job);
    await queue.idle();

    expect(hook.deliveries).toHaveLength(1);
    expect(hook.deliveries[0]?.verified).toBe(true);
    expect(JSON.parse(hook.deliveries[0]?.body ?? "{}")).toMatchObject({
      type: "reactor.reaction.failed",
      data: { request_id: job.requestId, status: 400, body: problem },
    });
  });

  it("retries a receiver that fails twice, then delivers once, running the reaction once", async () => {
    const hook = await newReceiver((n) => (n <= 2 ? 500 : 200));
    startQueue(callbackDeps());
    const job = newJob(hook.url);
    const timers = vi.spyOn(globalThis, "setTimeout");

    await queue.enqueue(job);
    await queue.idle();
    const delays = timers.mock.calls.map(([, ms]) => ms);
    timers.mockRestore();

    expect(hook.deliveries).toHaveLength(3);
    expect(hook.deliveries.every((d) => d.verified)).toBe(true);
    expect(new Set(hook.deliveries.map((d) => d.headers["webhook-id"]))).toEqual(new Set([job.requestId]));
    // Backoff: the job waited 50 ms after the first failure, 100 ms after the second (the queue's retry
    // timers, read from what it scheduled rather than from a clock).
    expect(delays.filter((ms) => ms === 50 || ms === 100)).toEqual([50, 100]);
    expect(runner.calls).toBe(3);
    expect(runner.executions).toBe(1);
    expect(await queue.deadLetters()).toEqual([]);
    expect(await auditMessages()).toEqual([
      `Callback delivery attempt 1 for request ${job.requestId}: HTTP 500`,
      `Callback delivery attempt 2 for request ${job.requestId}: HTTP 500`,
      `Callback delivery attempt 3 for request ${job.requestId}: delivered (HTTP 200)`,
    ]);
  });

  it("dead-letters a job whose receiver always fails after MAX_ATTEMPTS, keeping no args or results", async () => {
    const warn = vi.spyOn(logger, "warn");
    const hook = await newReceiver(() => 500);
    startQueue(callbackDeps());
    const job = newJob(hook.url);

    await queue.enqueue(job);
    await queue.idle();

    expect(hook.deliveries).toHaveLength(MAX_ATTEMPTS);
    expect(runner.executions).toBe(1);
    const letters = await queue.deadLetters();
    expect(letters).toEqual([
      {
        request_id: job.requestId,
        reactor_id: reactorId,
        tenant_id: tenantId,
        attempts: MAX_ATTEMPTS,
        last_error: "HTTP 500",
        failed_at: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T/),
      },
    ]);
    expect(readdirSync(join(dataDir, "dead-letters"))).toEqual([`${job.requestId}.json`]);
    const file = readFileSync(join(dataDir, "dead-letters", `${job.requestId}.json`), "utf8");
    expect(file).not.toContain(SEALED);
    expect(file).not.toContain(RESULT_MARKER);
    expect(file).not.toContain("hooks/reactions");
    expect(warn).toHaveBeenCalledWith(
      "reactor callback dead-lettered",
      expect.objectContaining({ request_id: job.requestId, attempts: MAX_ATTEMPTS }),
    );
    expect(await auditMessages()).toHaveLength(MAX_ATTEMPTS);

    // Operators still see it from a new process (the store is the data dir).
    expect(await new LocalJobQueue({ dataDir }).deadLetters()).toEqual(letters);
  });

  it("treats a receiver that never answers as a failure (timeout) and retries it", async () => {
    const hook = await newReceiver((n) => (n === 1 ? "hang" : 200));
    startQueue(callbackDeps({ timeoutMs: 300 }));
    const job = newJob(hook.url);

    await queue.enqueue(job);
    await queue.idle();

    expect(hook.deliveries).toHaveLength(2);
    expect(await auditMessages()).toEqual([
      `Callback delivery attempt 1 for request ${job.requestId}: timeout: The destination did not answer within 300 ms.`,
      `Callback delivery attempt 2 for request ${job.requestId}: delivered (HTTP 200)`,
    ]);
    expect(await queue.deadLetters()).toEqual([]);
  });

  it("refuses loopback receivers when private destinations are not allowed: dead-lettered at once, nothing sent", async () => {
    const hook = await newReceiver(() => 200);
    startQueue(callbackDeps({ allowPrivate: false }));
    const { port } = new URL(hook.url);
    const jobs = [
      newJob(`https://127.0.0.1:${port}/hooks`), // private address
      newJob(`https://localhost:${port}/hooks`), // a name resolving to one
      newJob(`http://203.0.113.10:${port}/hooks`), // not https
    ];

    for (const job of jobs) await queue.enqueue(job);
    await queue.idle();

    expect(hook.deliveries).toEqual([]);
    expect(runner.executions).toBe(3);
    const letters = await queue.deadLetters();
    expect(letters.map((l) => l.request_id).sort()).toEqual(jobs.map((j) => j.requestId).sort());
    for (const letter of letters) {
      expect(letter.attempts).toBe(1);
      expect(letter.last_error).toMatch(/^refused: /);
    }
    const messages = await auditMessages();
    expect(messages).toHaveLength(3);
    for (const message of messages) expect(message).toMatch(/attempt 1 for request .*: refused: /);
  });

  it("retries when the audit entry cannot be written, and a runner failure, without dead-lettering early", async () => {
    const hook = await newReceiver(() => 200);
    let auditFailures = 1;
    let runnerFailures = 1;
    const flaky: ReactionRunner = {
      run: async (job) => {
        if (runnerFailures-- > 0) throw new Error("store unavailable");
        return runner.run(job);
      },
    };
    startQueue({
      ...callbackDeps(),
      runner: flaky,
      auditLog: {
        append: async (entries) => {
          if (auditFailures-- > 0) throw new Error("audit store unavailable");
          await auditLog.append(entries);
        },
      },
    });
    const job = newJob(hook.url);

    await queue.enqueue(job);
    await queue.idle();

    // Attempt 1: the runner failed and its entry could not be written; attempt 2 delivered.
    expect(hook.deliveries).toHaveLength(1);
    expect(await auditMessages()).toEqual([
      `Callback delivery attempt 2 for request ${job.requestId}: delivered (HTTP 200)`,
    ]);
    expect(await queue.deadLetters()).toEqual([]);
  });

  it("tells the receiver the reaction failed (500) when the runner still fails at the last attempt", async () => {
    const hook = await newReceiver(() => 200);
    startQueue({
      ...callbackDeps(),
      runner: {
        run: async () => {
          throw new Error("KMS unavailable");
        },
      },
    });
    const job = newJob(hook.url);

    await queue.enqueue(job);
    await queue.idle();

    expect(hook.deliveries).toHaveLength(1);
    expect(hook.deliveries[0]?.verified).toBe(true);
    const payload = JSON.parse(hook.deliveries[0]?.body ?? "{}");
    expect(payload).toMatchObject({
      type: "reactor.reaction.failed",
      data: { request_id: job.requestId, status: 500, body: { status: 500, request_id: job.requestId } },
    });
    expect(hook.deliveries[0]?.body).not.toContain("KMS");
    const messages = await auditMessages();
    expect(messages).toHaveLength(MAX_ATTEMPTS);
    expect(messages.at(-1)).toBe(
      `Callback delivery attempt 5 for request ${job.requestId}: delivered (HTTP 200)`,
    );
    expect(messages.slice(0, -1).every((m) => m.endsWith(": the reaction could not be run"))).toBe(true);
  });

  it("handles jobs concurrently and stops cleanly with retries pending", async () => {
    const hook = await newReceiver(() => 500);
    queue = new LocalJobQueue({ dataDir, retryBaseSeconds: 60 });
    startQueue(callbackDeps());
    for (let i = 0; i < 6; i++) await queue.enqueue(newJob(hook.url));

    await vi.waitFor(() => expect(hook.deliveries).toHaveLength(6));
    await vi.waitFor(() => expect(queue.size).toBe(6));
    // All six wait a minute for their retry; stop cancels the timers and keeps the jobs.
    await queue.stop();
    expect(queue.size).toBe(6);
    expect(await queue.deadLetters()).toEqual([]);
  });
});

describe("end to end through POST /reactors/{id}/react", () => {
  const svc = useService({ allowPrivateDestinations: true });

  it("answers 202, runs the reaction once through the queue and delivers it signed with the tenant's secret", async () => {
    const deps = svc.service.deps;
    // The test hands react its own queue (instead of the service's), on the composition every route uses.
    Object.assign(deps, { jobQueue: queue });
    queue.start((job, attempt) => processCallbackJob(composedCallbackDeps(deps), job, attempt));
    const api = client(svc.url);
    const tenant = await createTenant(api, svc.rootKey);
    const app = await api.post<{ id: string; key: string }>("/applications", {
      key: tenant.managementKey,
      body: { name: "caller", type: "private", permissions: ["token:use"] },
    });
    const formula = await api.post<{ id: string }>("/reactor-formulas", {
      key: tenant.managementKey,
      body: {
        name: "Double",
        code: "module.exports = async function (req) { return { raw: { doubled: req.args.n * 2 } }; };",
        configuration: [],
        request_parameters: [{ name: "n", type: "number" }],
      },
    });
    const reactor = await api.post<{ id: string }>("/reactors", {
      key: tenant.managementKey,
      body: { name: "double", formula: { id: formula.body.id }, configuration: {} },
    });
    expect([app.status, formula.status, reactor.status]).toEqual([201, 201, 201]);
    const tenantSecret = await api.get<{ secret: string }>("/tenants/self/webhook-secret", {
      key: tenant.managementKey,
    });
    const hook = await newReceiver(() => 200, tenantSecret.body.secret);

    const reacted = await api.post<{ request_id: string }>(`/reactors/${reactor.body.id}/react`, {
      key: app.body.key,
      body: { args: { n: 21 }, callback_url: hook.url, timeout_ms: 10_000 },
    });
    expect(reacted.status, JSON.stringify(reacted.body)).toBe(202);
    await queue.idle();

    expect(hook.deliveries).toHaveLength(1);
    expect(hook.deliveries[0]?.verified).toBe(true);
    expect(JSON.parse(hook.deliveries[0]?.body ?? "{}")).toEqual({
      type: "reactor.reaction.completed",
      timestamp: expect.any(String),
      data: {
        request_id: reacted.body.request_id,
        reactor_id: reactor.body.id,
        callback_url: hook.url,
        status: 200,
        body: { raw: { doubled: 42 } },
      },
    });
    const logs = await api.get<{ data: { message: string; actor_id?: string }[] }>(
      `/logs?entity_id=${reactor.body.id}`,
      { key: tenant.managementKey },
    );
    expect(logs.body.data.map((entry) => entry.message)).toEqual(
      expect.arrayContaining([
        `Callback delivery attempt 1 for request ${reacted.body.request_id}: delivered (HTTP 200)`,
      ]),
    );
  });
});
