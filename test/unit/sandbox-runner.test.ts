import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, describe, expect, it } from "vitest";
import { closeSandbox, handler } from "#functions/sandbox-runner/handler.ts";
import type { RunnerEvent } from "#shared/adapters/aws/lambda-sandbox.ts";

afterAll(() => closeSandbox());

const CAUGHT = (url: string, times = 1) => `module.exports = async () => {
  try { for (let i = 0; i < ${times}; i++) await fetch(${JSON.stringify(url)}); return "sent"; }
  catch (error) { return { type: error.type, message: error.message }; }
};`;

const event = (code: string, outbound?: RunnerEvent["outbound"], input: unknown = {}): RunnerEvent => ({
  tenantId: "0190f5b2-7c1e-7a3b-8d4e-1f2a3b4c5d6e",
  code,
  input,
  timeoutMs: 3000,
  ...(outbound ? { outbound } : {}),
});

describe("the runner function's input (AWS)", () => {
  it("decodes a response transform's answer sent as base64 and has its child parse it (LambdaSandbox's last resort)", async () => {
    const answer = '["\\\\",9e20]';
    const input = { args: { body: Buffer.from(answer).toString("base64"), headers: {} } };
    const sent = {
      ...event("module.exports = async (req) => req.args.body", undefined, input),
      parseArgsBody: true,
    };
    const result = await handler({ ...sent, argsBodyBase64: true });
    expect(result).toEqual({ ok: true, value: JSON.parse(answer) });
  });
});

describe("the runner function's fetch (AWS)", () => {
  it("refuses plain http and private addresses whatever the service's local settings", async () => {
    const http = await handler(event(CAUGHT("http://api.partner.example/")));
    const loopback = await handler(
      event(CAUGHT("https://127.0.0.1:9001/2018-06-01/runtime/invocation/next")),
    );

    expect(http).toEqual({
      ok: true,
      value: { type: "refused", message: expect.stringContaining("only https") },
    });
    expect(loopback).toEqual({
      ok: true,
      value: { type: "refused", message: expect.stringContaining("address is not allowed") },
    });
  });

  it("applies the allowed hosts and limits the control plane sent with the run", async () => {
    const limits = { maxRequests: 0, maxBytesOut: 0, maxBytesIn: 0, timeoutMs: 1000 };

    const offList = await handler(
      event(CAUGHT("https://elsewhere.example/"), { allowedHosts: ["api.partner.example"] }),
    );
    const overLimit = await handler(event(CAUGHT("https://api.partner.example/"), { limits }));

    expect(offList).toEqual({
      ok: true,
      value: {
        type: "refused",
        message: expect.stringContaining("elsewhere.example is not one of the allowed hosts"),
      },
    });
    expect(overLimit).toEqual({
      ok: true,
      value: { type: "limit", message: expect.stringContaining("at most 0 requests") },
    });
  });
});

describe("the runner function's runs (AWS)", () => {
  it("runs in the same child as local mode: a later invocation reads nothing an earlier one left", async () => {
    const code = `module.exports = (req) => {
      if (req.secret) { Buffer.from(req.secret); Buffer.from(req.secret).toString("base64"); return "planted"; }
      return Buffer.from(new Uint8Array(Buffer.allocUnsafe(1).buffer)).toString("latin1").includes("4242");
    };`;

    const planted = await handler(event(code, undefined, { secret: "4242424242424242" }));
    const scanned = await handler(event(code));

    expect(planted).toEqual({ ok: true, value: "planted" });
    expect(scanned).toEqual({ ok: true, value: false });
  });
});

describe("the runner function's svc calls (AWS)", () => {
  it("calls only /tokens/{id}, and says which tokens' data it handed the code", async () => {
    const paths: string[] = [];
    const api = createServer((req, res) => {
      paths.push(String(req.url));
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify({ id: "tok_1", type: "card", data: { number: "4242424242424242" } }));
    });
    await new Promise<void>((resolve) => api.listen(0, "127.0.0.1", resolve));
    const baseUrl = `http://127.0.0.1:${(api.address() as AddressInfo).port}`;
    const code = `module.exports = async (req) => {
      const refused = [];
      for (const id of ["..", ".", ""]) await req.svc.tokens.retrieve(id).catch((e) => refused.push(e.status));
      const token = await req.svc.tokens.retrieve("tok_1");
      return { refused, last4: token.data.number.slice(-4) };
    };`;
    try {
      const result = await handler({ ...event(code), svc: { baseUrl, apiKey: "key_svc_test" } });
      // Before: ".." and "." reached the API's root and /tokens/ (a URL resolves dot segments).
      expect(result).toEqual({
        ok: true,
        value: { refused: [404, 404, 404], last4: "4242" },
        dataFrom: ["tok_1"],
      });
      expect(paths).toEqual(["/tokens/tok_1"]);
    } finally {
      api.close();
    }
  });
});
