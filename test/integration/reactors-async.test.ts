import { existsSync, readFileSync } from "node:fs";
import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { Webhook } from "standardwebhooks";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bodyText } from "#test/support/http.ts";
import { createReactor } from "#test/support/reactors.ts";
import { useService } from "#test/support/service.ts";
import { type TokenBody, VISA } from "#test/support/tokens.ts";

// Retries of failed callbacks wait 50 ms, 100 ms, … instead of minutes.
process.env.SVC_CALLBACK_RETRY_BASE_SECONDS = "0.05";
const svc = useService({ allowPrivateDestinations: true });

interface Delivery {
  headers: IncomingHttpHeaders;
  body: string;
}

let receiver: Server;
let baseUrl: string;
const deliveries = new Map<string, Delivery[]>();
const failuresLeft = new Map<string, number>();
/** A path whose first request is answered (500) only once its gate opens. */
const gates = new Map<string, { reached: () => void; open: Promise<void> }>();

beforeAll(async () => {
  receiver = createServer((req, res) => {
    let body = "";
    req.on("data", (c: Buffer) => {
      body += c.toString();
    });
    req.on("end", async () => {
      const path = String(req.url);
      const gate = gates.get(path);
      if (gate) {
        gates.delete(path);
        gate.reached();
        await gate.open;
        res.writeHead(500);
        res.end("not yet");
        return;
      }
      const left = failuresLeft.get(path) ?? 0;
      if (path.startsWith("/always-fails") || left > 0) {
        failuresLeft.set(path, left - 1);
        res.writeHead(500);
        res.end("no");
        return;
      }
      deliveries.set(path, [...(deliveries.get(path) ?? []), { headers: req.headers, body }]);
      res.writeHead(204);
      res.end();
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve));
  baseUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;
});

afterAll(() => {
  receiver.close();
});

async function waitFor<T>(probe: () => T | undefined, timeoutMs = 15_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error("timed out waiting");
    await new Promise((r) => setTimeout(r, 50));
  }
}

async function setup() {
  const { api, tenant, app, reactorId } = await createReactor(svc, {
    formula: {
      name: "Last4",
      code: "module.exports = async (req) => ({ raw: { last4: req.args.card.number.slice(-4) } });",
    },
    // token:delete: two tests delete the card while its reaction waits.
    permissions: ["token:create", "token:use", "token:delete"],
    reactorName: "last4",
  });
  const card = await api.post<TokenBody>("/tokens", {
    key: app.key,
    body: { type: "card", data: { number: VISA } },
  });
  const secret = await api.get<{ secret: string }>("/tenants/self/webhook-secret", {
    key: tenant.managementKey,
  });
  const react = (path: string, extra: Record<string, unknown> = {}) =>
    api.post<{ request_id: string }>(`/reactors/${reactorId}/react`, {
      key: app.key,
      body: { args: { card: `{{ ${card.body.id} }}` }, callback_url: `${baseUrl}${path}`, ...extra },
    });
  return { api, ...tenant, app, cardId: card.body.id, reactorId, secret: secret.body.secret, react };
}

describe("react with callback_url", () => {
  it("answers 202 at once and delivers the result signed per Standard Webhooks with the tenant's secret", async () => {
    const { react, secret, reactorId } = await setup();

    const accepted = await react("/ok-1");
    const [delivery] = await waitFor(() => deliveries.get("/ok-1"));
    const verified = new Webhook(secret).verify(
      String(delivery?.body),
      delivery?.headers as Record<string, string>,
    ) as {
      type: string;
      data: { request_id: string; reactor_id: string; status: number; body: unknown };
    };

    expect(accepted.status).toBe(202);
    expect(accepted.body.request_id).toEqual(expect.any(String));
    expect(delivery?.headers["webhook-id"]).toBe(accepted.body.request_id);
    expect(verified).toMatchObject({
      type: "reactor.reaction.completed",
      data: {
        request_id: accepted.body.request_id,
        reactor_id: reactorId,
        status: 200,
        body: { raw: { last4: "4242" } },
      },
    });
  });

  it("runs a queued react sent with an idempotency key as a job of its own: its tokenize block is written", async () => {
    const { api, app, reactorId } = await createReactor(svc, {
      formula: {
        name: "Tokenizer",
        code: "module.exports = async () => ({ raw: { ok: true }, tokenize: { made: { type: 'token', data: 'job' } } });",
      },
      permissions: ["token:create", "token:use"],
      reactorName: "tokenizer",
    });
    const headers = { "svc-idempotency-key": "queued-job-1" };
    const body = { args: {}, callback_url: `${baseUrl}/idem-job-1` };

    const accepted = await api.post<{ request_id: string }>(`/reactors/${reactorId}/react`, {
      key: app.key,
      body,
      headers,
    });
    const [delivery] = await waitFor(() => deliveries.get("/idem-job-1"));
    const replay = await api.post<{ request_id: string }>(`/reactors/${reactorId}/react`, {
      key: app.key,
      body,
      headers,
    });
    const payload = JSON.parse(String(delivery?.body)) as { data: { status: number; body: unknown } };

    expect(accepted.status).toBe(202);
    expect(payload.data.status).toBe(200);
    expect(JSON.stringify(payload.data.body)).toContain("made");
    expect(replay.headers.get("svc-idempotent-replayed")).toBe("true");
    expect(replay.body.request_id).toBe(accepted.body.request_id);
  });

  it("retries a failing receiver with backoff and delivers once; each attempt is in the audit log", async () => {
    const { react, api, managementKey, reactorId } = await setup();
    failuresLeft.set("/flaky-1", 2);

    const accepted = await react("/flaky-1");
    await waitFor(() => deliveries.get("/flaky-1"));
    await new Promise((r) => setTimeout(r, 300));
    const logs = await api.get<{ data: { message: string }[] }>(`/logs?entity_id=${reactorId}&size=50`, {
      key: managementKey,
    });
    const attempts = logs.body.data.filter(
      (l) => l.message.includes(accepted.body.request_id) && /attempt/i.test(l.message),
    );

    expect(deliveries.get("/flaky-1")).toHaveLength(1);
    expect(attempts.length).toBe(3);
    expect(JSON.stringify(logs.body)).not.toContain(VISA);
  });

  it("delivers a retry after the card was deleted as a failed 404 event, never the outcome computed from it", async () => {
    const { react, api, app, cardId } = await setup();
    let reached = () => {};
    let open = () => {};
    const firstAttempt = new Promise<void>((resolve) => {
      reached = resolve;
    });
    gates.set("/deleted-between", { reached, open: new Promise<void>((resolve) => (open = resolve)) });

    const accepted = await react("/deleted-between");
    await firstAttempt; // the outcome (last4 of the card) is kept; the receiver has not answered yet
    expect((await api.delete(`/tokens/${cardId}`, { key: app.key })).status).toBe(204);
    open(); // the first attempt fails (500): the queue delivers again
    const [delivery] = await waitFor(() => deliveries.get("/deleted-between"));
    const payload = JSON.parse(String(delivery?.body)) as {
      type: string;
      data: { request_id: string; status: number; body: unknown };
    };

    expect(payload.type).toBe("reactor.reaction.failed");
    expect(payload.data).toMatchObject({ request_id: accepted.body.request_id, status: 404 });
    expect(bodyText(payload)).not.toContain("4242");
  });

  it("does not run the code on args whose card was deleted while the job waited", async () => {
    const { react, api, app, cardId } = await setup();
    const { dynamo } = svc.service.deps;
    let deleted: Promise<unknown> | undefined;
    dynamo.middlewareStack.add(
      (next, context) => async (args) => {
        const key = (args.input as { Key?: { PK?: string } }).Key;
        if (context.commandName === "GetItemCommand" && key?.PK?.startsWith("REACTION#") && !deleted) {
          // The job starts: the card goes before its run reads it.
          deleted = api.delete(`/tokens/${cardId}`, { key: app.key });
          await deleted;
        }
        return next(args);
      },
      { step: "initialize", name: "deleteCardBeforeRun" },
    );
    try {
      await react("/deleted-before-run");
      const [delivery] = await waitFor(() => deliveries.get("/deleted-before-run"));
      const payload = JSON.parse(String(delivery?.body)) as { type: string; data: { status: number } };

      expect(deleted).toBeDefined();
      expect(payload.type).toBe("reactor.reaction.failed");
      expect(payload.data.status).toBe(404);
      expect(bodyText(payload)).not.toContain("4242");
    } finally {
      dynamo.middlewareStack.remove("deleteCardBeforeRun");
    }
  });

  it("dead-letters a callback whose receiver always fails, visible to operators without args or results", async () => {
    const { react } = await setup();

    const accepted = await react("/always-fails");
    const file = join(svc.service.deps.config.dataDir, "dead-letters", `${accepted.body.request_id}.json`);
    // The file may be seen before it is fully written: wait until it parses.
    const letter = await waitFor(() => {
      try {
        return existsSync(file)
          ? (JSON.parse(readFileSync(file, "utf8")) as Record<string, unknown>)
          : undefined;
      } catch {
        return undefined;
      }
    }, 20_000);

    expect(letter).toMatchObject({ request_id: accepted.body.request_id, attempts: 5 });
    expect(bodyText(letter)).not.toContain("4242");
    expect(JSON.stringify(letter)).not.toContain(VISA);
  });

  it("validates timeout_ms (10000–210000) and the callback URL", async () => {
    const { react } = await setup();

    const tooShort = await react("/x", { timeout_ms: 9999 });
    const tooLong = await react("/x", { timeout_ms: 210_001 });
    const notUrl = await react("/x", { callback_url: "ftp://example.com" });

    expect(tooShort.status).toBe(400);
    expect(tooLong.status).toBe(400);
    expect(notUrl.status).toBe(400);
  });
});
