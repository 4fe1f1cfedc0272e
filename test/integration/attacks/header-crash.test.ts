/**
 * Attack: one tenant stops the service for every tenant. The tenant points a proxy (or a reaction's
 * callback_url) at a server of its own that answers with a raw response header line `__proto__: x`.
 * Node's HTTP client collects response headers on an ordinary object; under --disable-proto=throw (every
 * host process of the service) writing that name throws inside the parser, an uncaught exception that ends
 * the process: `npm start` exits, a warm Lambda instance dies. shared/http/safe-headers.ts drops such a line
 * on every IncomingMessage, client and server side, process-wide.
 */
import { createServer, type Server, type Socket } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { client, createTenant } from "#test/support/http.ts";
import { createOpenProxy } from "#test/support/proxies.ts";
import { useService } from "#test/support/service.ts";

// Retries of failed callbacks wait 50 ms, 100 ms, … instead of minutes.
process.env.SVC_CALLBACK_RETRY_BASE_SECONDS = "0.05";
const svc = useService({ allowPrivateDestinations: true });

/** Request lines the hostile destination received, e.g. "POST /hook HTTP/1.1". */
const received: string[] = [];
let hostile: Server;
let hostileUrl: string;
const sockets = new Set<Socket>();

/** Answers every request with raw bytes Node's own server would never emit: a `__proto__` header line. */
function answer(socket: Socket, requestLine: string): void {
  received.push(requestLine);
  const body = JSON.stringify({ ok: true });
  socket.end(
    "HTTP/1.1 200 OK\r\n" +
      "Content-Type: application/json\r\n" +
      "__proto__: x\r\n" +
      "X-Kept: yes\r\n" +
      `Content-Length: ${Buffer.byteLength(body)}\r\n` +
      "Connection: close\r\n" +
      "\r\n" +
      body,
  );
}

beforeAll(async () => {
  hostile = createServer((socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
    let buffered = Buffer.alloc(0);
    let done = false;
    socket.on("data", (chunk: Buffer) => {
      if (done) return;
      buffered = Buffer.concat([buffered, chunk]);
      const end = buffered.indexOf("\r\n\r\n");
      if (end < 0) return;
      const head = buffered.subarray(0, end).toString("latin1");
      const length = Number(/\r\ncontent-length:\s*(\d+)/i.exec(head)?.[1] ?? 0);
      if (buffered.length - end - 4 < length) return;
      done = true;
      answer(socket, head.split("\r\n")[0] ?? "");
    });
  });
  await new Promise<void>((resolve) => hostile.listen(0, "127.0.0.1", resolve));
  const address = hostile.address();
  if (address === null || typeof address === "string") throw new Error("no port");
  hostileUrl = `http://127.0.0.1:${address.port}`;
});

afterAll(async () => {
  for (const socket of sockets) socket.destroy();
  await new Promise<void>((resolve) => hostile.close(() => resolve()));
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

/** Another tenant, unrelated to the attacker, still gets answers: the process is alive and well. */
async function anotherTenantIsServed(): Promise<void> {
  const api = client(svc.url);
  const health = await api.get("/healthz");
  expect(health.status).toBe(200);
  const { managementKey } = await createTenant(api, svc.rootKey, "Bystander");
  const applications = await api.get("/applications", { key: managementKey });
  expect(applications.status).toBe(200);
}

describe("attack: a destination answering a raw `__proto__` header line", () => {
  it("via a proxy: the caller gets the answer without that header, and the service keeps serving", async () => {
    const { api, key } = await createOpenProxy(svc.url, svc.rootKey, hostileUrl);

    const res = await api.post<{ ok: boolean }>("/proxy/crash", {
      headers: { "svc-proxy-key": key },
      body: { hello: "world" },
    });

    expect(res.status).toBe(200);
    expect(res.body).toEqual({ ok: true });
    expect(res.headers.get("x-kept")).toBe("yes");
    expect(res.headers.get("svc-proxy-destination-status")).toBe("200");
    expect(received).toContain("POST /crash HTTP/1.1");
    await anotherTenantIsServed();
  });

  it("via a reaction's callback_url: the delivery completes, and the service keeps serving", async () => {
    const api = client(svc.url);
    const { managementKey } = await createTenant(api, svc.rootKey, "Attacker");
    const app = await api.post<{ id: string; key: string }>("/applications", {
      key: managementKey,
      body: { name: "r", type: "private", permissions: ["token:use"] },
    });
    const formula = await api.post<{ id: string }>("/reactor-formulas", {
      key: managementKey,
      body: { name: "Constant", code: "module.exports = async () => ({ raw: { ok: true } });" },
    });
    expect(formula.status, JSON.stringify(formula.body)).toBe(201);
    const reactor = await api.post<{ id: string }>("/reactors", {
      key: managementKey,
      body: {
        name: "constant",
        formula: { id: formula.body.id },
        configuration: {},
        application: { id: app.body.id },
      },
    });
    expect(reactor.status, JSON.stringify(reactor.body)).toBe(201);

    const react = await api.post(`/reactors/${reactor.body.id}/react`, {
      key: app.body.key,
      body: { args: {}, callback_url: `${hostileUrl}/hook` },
    });
    expect(react.status, JSON.stringify(react.body)).toBe(202);

    await waitFor(() => (received.includes("POST /hook HTTP/1.1") ? true : undefined));
    // The answer is parsed after the request line arrives: give the service time to read it (and to crash,
    // as it did), then check it still serves, and that the 200 counted as delivered (no retry).
    await new Promise((r) => setTimeout(r, 500));
    await anotherTenantIsServed();
    expect(received.filter((line) => line === "POST /hook HTTP/1.1")).toHaveLength(1);
  });
});
