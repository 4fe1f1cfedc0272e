/**
 * Attack: odd but cheap inputs to /proxy that made the service fail (500) instead of answering the caller's
 * mistake: a query holding malformed percent-encoding (decoded outside any error handling), and transforms
 * (tenant code) returning header names an ordinary object cannot hold (`__proto__`) or that Node cannot send.
 * Every such input gets a 4xx `proxy_error` or is dropped; headers from transforms are collected on
 * null-prototype maps.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openProxy } from "#test/support/proxies.ts";
import { useService } from "#test/support/service.ts";

const svc = useService({ allowPrivateDestinations: true });

let destination: Server;
let destinationUrl: string;
/** Raw header names (lower-cased) of every request the destination received. */
const receivedNames: string[][] = [];

beforeAll(async () => {
  destination = createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      receivedNames.push(req.rawHeaders.filter((_, i) => i % 2 === 0).map((name) => name.toLowerCase()));
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify({ ok: true }));
    });
  });
  await new Promise<void>((resolve) => destination.listen(0, "127.0.0.1", resolve));
  destinationUrl = `http://127.0.0.1:${(destination.address() as AddressInfo).port}`;
});

afterAll(() => {
  destination.close();
});

const proxyWith = (transforms: {
  request_transform?: { code: string };
  response_transform?: { code: string };
}) => openProxy(svc.url, svc.rootKey, destinationUrl, transforms);

/** Header names a transform may try: the first would reach Object.prototype, the rest Node cannot send. */
const ODD_HEADERS = `{
  ["__proto__"]: "polluted",
  "__PROTO__": "polluted",
  "bad name": "x",
  "x-newline": "a\\r\\nx-injected: yes",
  "x-ok": "kept",
}`;

/** Framing and service headers a response transform may try: dropped as they are from a destination. */
const FRAMING_HEADERS = `{ "content-length": "1", "transfer-encoding": "chunked", "svc-proxy-destination-status": "999" }`;

describe("attack: odd inputs that made /proxy fail", () => {
  it.each([
    ["a malformed name", "%E0%A4%A=1"],
    ["a truncated escape in a name", "a=1&b%=2"],
    ["a malformed proxy key value", "svc-proxy-key=%E0%A4%A"],
  ])("%s in the query: a 400 proxy_error, not a 500", async (_, query) => {
    const key = await proxyWith({});

    const res = await fetch(`${svc.url}/proxy?${query}`, { headers: { "svc-proxy-key": key } });
    const body = (await res.json()) as { proxy_error?: { status: number; detail: string } };

    expect(res.status).toBe(400);
    expect(body.proxy_error?.status).toBe(400);
    expect(body.proxy_error?.detail).toMatch(/percent-encoding/);
    expect(res.headers.get("svc-proxy-destination-status")).toBeNull();
  });

  it("a response transform returning `__proto__`, unsendable or framing headers: answered, those dropped", async () => {
    const key = await proxyWith({
      response_transform: {
        code: `module.exports = async (req) => ({
          body: req.args.body,
          headers: { ...${ODD_HEADERS}, ...${FRAMING_HEADERS} },
        });`,
      },
    });

    const res = await fetch(`${svc.url}/proxy`, { headers: { "svc-proxy-key": key } });

    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ ok: true });
    expect(res.headers.get("x-ok")).toBe("kept");
    expect(res.headers.get("x-injected")).toBeNull();
    expect(res.headers.get("svc-proxy-destination-status")).toBe("200");
    expect(Object.prototype).not.toHaveProperty("polluted");
  });

  it("a request transform returning a `__proto__` header: forwarded without it", async () => {
    const key = await proxyWith({
      request_transform: {
        code: `module.exports = async (req) => ({ body: req.args.body, headers: ${ODD_HEADERS} });`,
      },
    });
    receivedNames.length = 0;

    const res = await fetch(`${svc.url}/proxy`, { headers: { "svc-proxy-key": key } });

    expect(res.status).toBe(200);
    expect(receivedNames).toHaveLength(1);
    expect(receivedNames[0]).toContain("x-ok");
    expect(receivedNames[0]).not.toContain("__proto__");
    expect(receivedNames[0]).not.toContain("x-injected");
  });

  it("a body of 200,000 `{` (an open proxy's key suffices): forwarded at once, where the expression scan had held the process for minutes", async () => {
    const key = await proxyWith({});
    const body = "{".repeat(200_000);
    const res = await fetch(`${svc.url}/proxy`, {
      method: "POST",
      headers: { "svc-proxy-key": key, "content-type": "text/plain" },
      body,
    });
    expect(res.status).toBe(200);
    expect((await fetch(`${svc.url}/healthz`)).status).toBe(200);
  });
});
