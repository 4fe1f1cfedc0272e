import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ProcessSandbox } from "#shared/sandbox/pool.ts";

/** The host's rules as the code sees them, without the service: a pool that refuses private addresses. */
const filtered = new ProcessSandbox({ prespawn: false });
const httpsOnly = new ProcessSandbox({
  prespawn: false,
  outbound: { allowPrivate: true, requireHttps: true },
});
let destination = "";
let hits = 0;
const server = http.createServer((_req, res) => {
  hits += 1;
  res.end("hello");
});
beforeAll(async () => {
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  destination = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
});
afterAll(async () => {
  server.close();
  await Promise.all([filtered.close(), httpsOnly.close()]);
});

const CAUGHT = (url: string) => `module.exports = async () => {
  try { await fetch(${JSON.stringify(url)}); return "sent"; }
  catch (error) { return { name: error.name, type: error.type, message: error.message }; }
};`;

/** Runs code in `sandbox` that fetches `url` and answers the error it caught (or "sent"). */
const fetchIn = (sandbox: ProcessSandbox, tenantId: string, url: string) =>
  sandbox.run({ tenantId, code: CAUGHT(url), input: {}, timeoutMs: 3000 });

/** A run whose fetch the host refused, saying `reason`. */
const refused = (reason: string) => ({
  ok: true,
  value: { name: "FetchError", type: "refused", message: expect.stringContaining(reason) },
});

describe("fetch rules in the sandbox host", () => {
  it("refuses loopback and private addresses unless SVC_PROXY_ALLOW_PRIVATE", async () => {
    const loopback = await fetchIn(filtered, "t-a", destination);
    const lan = await fetchIn(filtered, "t-a", "http://10.1.2.3/");

    for (const result of [loopback, lan]) expect(result).toEqual(refused("address is not allowed"));
    expect(hits).toBe(0);
  });

  it("refuses plain http where https is required (AWS)", async () => {
    const result = await fetchIn(httpsOnly, "t-b", destination);

    expect(result).toEqual(refused("only https is allowed"));
    expect(hits).toBe(0);
  });

  it("offers node-fetch's exports (default and named) and WHATWG classes of the code's own context", async () => {
    const code = `const nodeFetch = require("node-fetch");
      const { default: byDefault, Headers, Response, Request, FetchError, AbortError } = require("node-fetch");
      module.exports = async () => {
        const headers = new Headers({ "Content-Type": "text/plain" });
        headers.append("x-a", "1");
        headers.append("X-A", "2");
        const res = new Response("hello", { status: 201, headers });
        const json = Response.json({ a: 1 });
        return {
          same: byDefault === nodeFetch && typeof nodeFetch === "function" && nodeFetch.Headers === Headers,
          header: [res.headers.get("content-type"), res.headers.get("x-a"), [...res.headers.keys()]],
          body: [res.ok, res.status, await res.text(), res.bodyUsed, await json.json()],
          request: new Request("https://a.example/x", { method: "post", body: "b" }).method,
          errors: [new FetchError("m", "system") instanceof TypeError, new AbortError().name],
        };
      };`;

    const result = await filtered.run({ tenantId: "t-d", code, input: {}, timeoutMs: 3000 });

    expect(result).toEqual({
      ok: true,
      value: {
        same: true,
        header: ["text/plain", "1, 2", ["content-type", "x-a"]],
        body: [true, 201, "hello", true, { a: 1 }],
        request: "POST",
        errors: [true, "AbortError"],
      },
    });
  });
});
