import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, describe, expect, it } from "vitest";
import type { SandboxRequest, SandboxResult, SvcOperation } from "#shared/ports/sandbox.ts";
import { fairShare, ProcessSandbox } from "#shared/sandbox/pool.ts";
import { permissionFlag } from "#shared/sandbox/spawn.ts";

const sandbox = new ProcessSandbox();
afterAll(() => sandbox.close());

let tenants = 0;
/** A tenant of its own per test, so no test shares a process with another. */
const newTenant = () => `tenant-${process.pid}-${++tenants}`;

function run(code: string, overrides: Partial<SandboxRequest> = {}): Promise<SandboxResult> {
  return sandbox.run({ tenantId: newTenant(), code, input: {}, timeoutMs: 2000, ...overrides });
}

const isAlive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};
/** Whether the process is gone within a second (a killed process takes a moment to be reaped). */
async function hasExited(pid: number): Promise<boolean> {
  for (let i = 0; i < 100 && isAlive(pid); i++) await sleep(10);
  return !isAlive(pid);
}

describe("running code", () => {
  it("gives the code its input as req and answers its JSON result (async or sync)", async () => {
    const input = {
      args: { body: { card: "4242" }, headers: { a: "b" }, method: "POST" },
      configuration: { x: 1 },
    };
    const asyncCode = `module.exports = async function (req) {
      return { body: { ...req.args.body, seen: req.configuration.x }, headers: req.args.headers, svc: req.svc };
    };`;

    const asyncResult = await run(asyncCode, { input });
    const syncResult = await run("module.exports = (req) => [req.args.method, typeof req]", { input });

    expect(asyncResult).toEqual({
      ok: true,
      value: { body: { card: "4242", seen: 1 }, headers: { a: "b" }, svc: null },
    });
    expect(syncResult).toEqual({ ok: true, value: ["POST", "object"] });
  });

  it("parses args.body in the run when told it is JSON text (a destination's answer), keeping text that is not", async () => {
    const code = `module.exports = (req) => [typeof req.args.body, req.args.body instanceof Object || req.args.body]`;
    const json = { args: { body: '{"card":"4242"}' } };
    const tenantId = newTenant(); // one process for the three runs

    const parsed = await run(code, { tenantId, input: json, parseArgsBody: true });
    const notJson = await run(code, { tenantId, input: { args: { body: "<html>" } }, parseArgsBody: true });
    const untold = await run(code, { tenantId, input: json });

    // An object of the run's own realm (instanceof its Object), as the rest of req.
    expect(parsed).toEqual({ ok: true, value: ["object", true] });
    expect(notJson).toEqual({ ok: true, value: ["string", "<html>"] });
    expect(untold).toEqual({ ok: true, value: ["string", '{"card":"4242"}'] });
  });

  it("answers undefined for no result and drops what JSON cannot carry", async () => {
    const nothing = await run("module.exports = () => {}");
    const lossy = await run("module.exports = () => ({ d: new Date(0), f() {}, u: undefined, n: NaN })");

    expect(nothing).toEqual({ ok: true, value: undefined });
    expect(lossy).toEqual({ ok: true, value: { d: "1970-01-01T00:00:00.000Z", n: null } });
  });

  it("gives Buffer, URL, TextEncoder, atob/btoa, timers and fetch, but no process", async () => {
    const code = `module.exports = () => ({
      b64: Buffer.from("hello").toString("base64"),
      host: new URL("https://example.com/a?b=1").host,
      query: new URLSearchParams({ a: "1" }).toString(),
      bytes: new TextEncoder().encode("é").length,
      atob: atob(btoa("x")),
      present: [typeof setTimeout, typeof queueMicrotask, typeof fetch],
      missing: [typeof process, typeof global, typeof __sandboxHost],
    });`;

    const result = await run(code);

    expect(result).toEqual({
      ok: true,
      value: {
        b64: "aGVsbG8=",
        host: "example.com",
        query: "a=1",
        bytes: 2,
        atob: "x",
        present: ["function", "function", "function"],
        missing: ["undefined", "undefined", "undefined"],
      },
    });
  });
});

describe("require", () => {
  const requireTenant = newTenant();
  it("allows crypto, util, url, querystring, buffer and string_decoder (also as node:...)", async () => {
    const code = `
      const crypto = require("crypto");
      const util = require("node:util");
      const { parse } = require("querystring");
      const { StringDecoder } = require("string_decoder");
      const { Buffer: B } = require("buffer");
      const url = require("url");
      module.exports = () => ({
        hash: crypto.createHash("sha256").update("x").digest("hex").slice(0, 8),
        text: util.format("%s-%d", "a", 1),
        query: parse("a=1&b=2"),
        decoded: new StringDecoder("utf8").write(B.from([0xc3, 0xa9])),
        path: url.parse("https://h/p?q=1").pathname,
      });`;

    const result = await run(code);

    expect(result).toEqual({
      ok: true,
      value: { hash: "2d711642", text: "a-1", query: { a: "1", b: "2" }, decoded: "é", path: "/p" },
    });
  });

  it("lets the code await the modules' own promises (webcrypto, promisify)", async () => {
    const code = `const crypto = require("crypto");
      const { promisify } = require("util");
      module.exports = async () => {
        const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode("x"));
        const bytes = await promisify(crypto.randomBytes)(8);
        return [Buffer.from(digest).toString("hex").slice(0, 8), bytes.length];
      };`;

    const result = await run(code);

    expect(result).toEqual({ ok: true, value: ["2d711642", 8] });
  });

  it.each([
    "fs",
    "node:fs",
    "fs/promises",
    "child_process",
    "worker_threads",
    "net",
    "http",
    "https",
    "dns",
    "dgram",
    "tls",
    "module",
    "vm",
    "process",
    "os",
    "./local.js",
    "/etc/passwd",
  ])("refuses %s", async (name) => {
    // One process asked for each (a process per name took 5 s): a refusal leaves the process as it was.
    const result = await run("module.exports = (req) => require(req.args.name)", {
      tenantId: requireTenant,
      input: { args: { name } },
    });

    expect(result).toMatchObject({ ok: false, error: { kind: "thrown", name: "Error" } });
    expect(!result.ok && result.error.message).toContain(`Cannot require '${name}'`);
  });
});

describe("req.svc", () => {
  it("forwards calls to onSvcCall and resolves with the host's answer", async () => {
    const calls: Array<[SvcOperation, unknown[]]> = [];
    const onSvcCall = async (op: SvcOperation, args: unknown[]) => {
      calls.push([op, args]);
      return op === "tokens.create" ? { id: "tok_1" } : op === "tokens.delete" ? undefined : { id: args[0] };
    };
    const code = `module.exports = async ({ svc }) => {
      const created = await svc.tokens.create({ type: "token", data: "secret" });
      const [read, updated, deleted] = await Promise.all([
        svc.tokens.retrieve(created.id),
        svc.tokens.update(created.id, { metadata: { a: "1" } }),
        svc.tokens.delete(created.id),
      ]);
      return { created, read, updated, deleted: deleted === undefined };
    };`;

    const result = await run(code, { onSvcCall });

    expect(result).toEqual({
      ok: true,
      value: { created: { id: "tok_1" }, read: { id: "tok_1" }, updated: { id: "tok_1" }, deleted: true },
    });
    expect(calls).toEqual([
      ["tokens.create", [{ type: "token", data: "secret" }]],
      ["tokens.retrieve", ["tok_1"]],
      ["tokens.update", ["tok_1", { metadata: { a: "1" } }]],
      ["tokens.delete", ["tok_1"]],
    ]);
  });

  it("rejects in the code with the status and message of an HTTP error, and hides other errors", async () => {
    let count = 0;
    const onSvcCall = async () => {
      count += 1;
      if (count === 1) throw Object.assign(new Error("Token not found."), { status: 404 });
      throw new Error("ECONNREFUSED 10.0.0.1:8000 table svc-prod-tokens");
    };
    const code = `module.exports = async ({ svc }) => {
      const seen = [];
      for (const id of ["a", "b"]) {
        try { await svc.tokens.retrieve(id); } catch (e) { seen.push([e.name, e.status, e.message]); }
      }
      return seen;
    };`;

    const result = await run(code, { onSvcCall });

    expect(result).toEqual({
      ok: true,
      value: [
        ["SvcError", 404, "Token not found."],
        ["SvcError", null, "the svc call failed"],
      ],
    });
  });

  it("is null without onSvcCall, and calls after the run ended are refused", async () => {
    let calls = 0;
    const onSvcCall = async () => {
      calls += 1;
      return null;
    };
    const withoutSvc = await run("module.exports = (req) => req.svc");
    // The call is made a few microtasks after the result was sent.
    const code = `module.exports = (req) => {
      Promise.resolve().then(() => null).then(() => null).then(() => req.svc.tokens.retrieve("late")).catch(() => {});
      return "done";
    };`;

    const withSvc = await run(code, { onSvcCall });
    await sleep(50);

    expect(withoutSvc).toEqual({ ok: true, value: null });
    expect(withSvc).toEqual({ ok: true, value: "done" });
    expect(calls).toBe(0);
  });
});

describe("errors", () => {
  it("captures name, message, an integer status and a JSON body of what the code throws", async () => {
    const code = `module.exports = async () => {
      class ReactorError extends Error { constructor() { super("card declined"); this.name = "ReactorError"; this.status = 422; this.body = { code: "declined" }; } }
      throw new ReactorError();
    };`;

    const result = await run(code);

    expect(result).toEqual({
      ok: false,
      error: {
        kind: "thrown",
        name: "ReactorError",
        message: "card declined",
        status: 422,
        body: { code: "declined" },
      },
    });
  });

  it("captures thrown strings, synchronous throws and results JSON cannot carry", async () => {
    const thrownString = await run('module.exports = () => { throw "plain" }');
    const rejected = await run("module.exports = () => Promise.reject(new TypeError('bad'))");
    const bigint = await run("module.exports = () => ({ n: 1n })");

    expect(thrownString).toEqual({ ok: false, error: { kind: "thrown", name: "Error", message: "plain" } });
    expect(rejected).toEqual({ ok: false, error: { kind: "thrown", name: "TypeError", message: "bad" } });
    expect(bigint).toMatchObject({ ok: false, error: { kind: "thrown", name: "TypeError" } });
  });

  it.each([
    ["no function", "module.exports = { handler() {} }", "module.exports must be a function"],
    ["a syntax error", "module.exports = function ( {", "SyntaxError"],
    ["a throw while loading", "throw new Error('boom'); module.exports = () => 1", "boom"],
    ["code leaving the module function", "}); (function () {", "SyntaxError"],
  ])("answers invalid-code for %s", async (_, code, message) => {
    const result = await run(code);

    expect(result).toMatchObject({ ok: false, error: { kind: "invalid-code" } });
    expect(!result.ok && result.error.message).toContain(message);
  });

  it("answers a result larger than the limit as memory", async () => {
    const small = new ProcessSandbox({ maxResultChars: 1000, prespawn: false });
    try {
      const result = await small.run({
        tenantId: newTenant(),
        code: "module.exports = () => 'x'.repeat(5000)",
        input: null,
        timeoutMs: 2000,
      });

      expect(result).toMatchObject({ ok: false, error: { kind: "memory" } });
    } finally {
      await small.close();
    }
  });

  it("rejects programming errors of the caller", async () => {
    const base = { tenantId: "t", code: "module.exports = () => 1", input: null, timeoutMs: 1000 };

    await expect(sandbox.run({ ...base, timeoutMs: 0 })).rejects.toThrow(/timeoutMs/);
    await expect(sandbox.run({ ...base, tenantId: "" })).rejects.toThrow(/tenantId/);
    await expect(sandbox.run({ ...base, input: { n: 1n } })).rejects.toThrow(TypeError);
  });
});

describe("processes", () => {
  it("reuses one process per tenant and code, and never shares it with another tenant or code", async () => {
    const code = "module.exports = () => 1";
    const [a, b] = [newTenant(), newTenant()];

    await sandbox.run({ tenantId: a, code, input: null, timeoutMs: 2000 });
    const first = sandbox.pidOf(a, code);
    await sandbox.run({ tenantId: a, code, input: null, timeoutMs: 2000 });
    const again = sandbox.pidOf(a, code);
    await sandbox.run({ tenantId: b, code, input: null, timeoutMs: 2000 });
    await sandbox.run({ tenantId: a, code: `${code};`, input: null, timeoutMs: 2000 });

    expect(first).toBeTypeOf("number");
    expect(again).toBe(first);
    expect(sandbox.pidOf(b, code)).not.toBe(first);
    expect(sandbox.pidOf(a, `${code};`)).not.toBe(first);
    expect(new Set([first, sandbox.pidOf(b, code), sandbox.pidOf(a, `${code};`)]).size).toBe(3);
  });

  it("runs concurrent runs of one key in its process and keeps their inputs apart", async () => {
    const tenantId = newTenant();
    const code = "module.exports = async (req) => { await null; return req.n * 2; }";

    const results = await Promise.all(
      Array.from({ length: 20 }, (_, n) => sandbox.run({ tenantId, code, input: { n }, timeoutMs: 2000 })),
    );

    expect(results).toEqual(Array.from({ length: 20 }, (_, n) => ({ ok: true, value: n * 2 })));
  });

  it("kills a process that passes its timeout and starts a fresh one for the next run", async () => {
    const tenantId = newTenant();
    const code = "module.exports = (req) => { if (req.hang) for (;;) {} return 'fine'; }";
    await sandbox.run({ tenantId, code, input: {}, timeoutMs: 2000 });
    const before = sandbox.pidOf(tenantId, code) ?? 0;

    const hung = await sandbox.run({ tenantId, code, input: { hang: true }, timeoutMs: 200 });
    const next = await sandbox.run({ tenantId, code, input: {}, timeoutMs: 2000 });

    expect(hung).toEqual({
      ok: false,
      error: { kind: "timeout", message: "the code did not finish within 200 ms" },
    });
    expect(next).toEqual({ ok: true, value: "fine" });
    expect(sandbox.pidOf(tenantId, code)).not.toBe(before);
    expect(await hasExited(before)).toBe(true);
  });

  it("fails the sibling runs of a process killed by a timeout as crashed", async () => {
    const tenantId = newTenant();
    const code =
      "module.exports = async (req) => { if (req.hang) await new Promise(() => {}); await new Promise(() => {}); }";

    const [hung, sibling] = await Promise.all([
      sandbox.run({ tenantId, code, input: { hang: true }, timeoutMs: 150 }),
      sandbox.run({ tenantId, code, input: {}, timeoutMs: 5000 }),
    ]);

    expect(hung).toMatchObject({ ok: false, error: { kind: "timeout" } });
    expect(sibling).toMatchObject({ ok: false, error: { kind: "crashed" } });
  });

  it("caps the number of processes by stopping the least recently used idle one", async () => {
    const small = new ProcessSandbox({ maxProcesses: 2, prespawn: false });
    try {
      const code = "module.exports = () => 1";
      for (const tenantId of ["a", "b"]) await small.run({ tenantId, code, input: null, timeoutMs: 2000 });
      const pidA = small.pidOf("a", code) ?? 0;

      await small.run({ tenantId: "c", code, input: null, timeoutMs: 2000 });

      expect(small.size).toBe(2);
      expect(small.pidOf("a", code)).toBeUndefined();
      expect(small.pidOf("b", code)).toBeTypeOf("number");
      expect(await hasExited(pidA)).toBe(true);
    } finally {
      await small.close();
    }
  });

  it("stops idle processes after idleMs and keeps a blank spare ready", async () => {
    const short = new ProcessSandbox({ idleMs: 100 });
    try {
      const code = "module.exports = () => 1";
      await short.run({ tenantId: "a", code, input: null, timeoutMs: 2000 });
      const pid = short.pidOf("a", code) ?? 0;

      for (let i = 0; i < 100 && short.pidOf("a", code) !== undefined; i++) await sleep(20);

      expect(short.pidOf("a", code)).toBeUndefined();
      expect(await hasExited(pid)).toBe(true);
      expect(short.size).toBe(1); // the spare
    } finally {
      await short.close();
    }
  });

  it("kills every process on close and refuses later runs", async () => {
    const own = new ProcessSandbox();
    const code = "module.exports = () => 1";
    await own.run({ tenantId: "a", code, input: null, timeoutMs: 2000 });
    const pid = own.pidOf("a", code) ?? 0;

    await own.close();

    expect(await hasExited(pid)).toBe(true);
    expect(own.size).toBe(0);
    await expect(own.run({ tenantId: "a", code, input: null, timeoutMs: 2000 })).rejects.toThrow(/closed/);
  });

  it("picks the permission flag by Node version", () => {
    expect(permissionFlag("20.19.0")).toBe("--experimental-permission");
    expect(permissionFlag("22.12.0")).toBe("--experimental-permission");
    expect(permissionFlag("22.13.0")).toBe("--permission");
    expect(permissionFlag("23.5.0")).toBe("--permission");
    expect(permissionFlag("24.0.0")).toBe("--permission");
  });
});

describe("a full pool", () => {
  it("keeps a blank spare ready by retiring the least recently used idle process, never passing its cap", async () => {
    const pool = new ProcessSandbox({ maxProcesses: 2 });
    const code = "module.exports = async () => 1";
    try {
      await pool.warm();
      const a = newTenant();
      const b = newTenant();
      expect((await pool.run({ tenantId: a, code, input: {}, timeoutMs: 5000 })).ok).toBe(true);
      expect((await pool.run({ tenantId: b, code, input: {}, timeoutMs: 5000 })).ok).toBe(true);
      await sleep(200);

      expect(pool.size).toBe(2);
      expect(pool.pidOf(a, code)).toBeUndefined();
      expect(pool.pidOf(b, code)).toEqual(expect.any(Number));
      const c = await pool.run({ tenantId: newTenant(), code, input: {}, timeoutMs: 5000 });
      expect(c.ok).toBe(true);
      expect(pool.size).toBeLessThanOrEqual(2);
    } finally {
      await pool.close();
    }
  });
});

describe("fair share", () => {
  it("gives each busy tenant max(1, floor(maxProcesses / (busy tenants + 1))), at most the per-tenant cap", () => {
    expect(fairShare(16, 1)).toBe(8);
    expect(fairShare(16, 2)).toBe(5);
    expect(fairShare(16, 15)).toBe(1);
    expect(fairShare(16, 40)).toBe(1);
    expect(fairShare(4, 1)).toBe(2);
    expect(fairShare(16, 1, 3)).toBe(3);
  });

  it("makes a tenant over its share wait, while another tenant gets a process at once", async () => {
    const pool = new ProcessSandbox({ maxProcesses: 4 });
    const hold = (n: number) =>
      `module.exports = () => { Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 5000); return ${n}; }`;
    try {
      await pool.warm();
      const flooder = newTenant();
      const flood = [0, 1, 2, 3, 4].map((n) =>
        pool.run({ tenantId: flooder, code: hold(n), input: {}, timeoutMs: 3000 }),
      );
      await sleep(300);
      const other = await pool.run({
        tenantId: newTenant(),
        code: "module.exports = () => 'mine'",
        input: {},
        timeoutMs: 2000,
      });

      // Without a share, the flood holds all 4 processes for 3 s and this run finds none within its 2 s.
      expect(other).toEqual({ ok: true, value: "mine" });
      const kinds = (await Promise.all(flood)).map((r) => (r.ok ? "ok" : r.error.kind));
      expect(kinds).toEqual(["timeout", "timeout", "timeout", "timeout", "timeout"]);
      expect(pool.size).toBeLessThanOrEqual(4);
    } finally {
      await pool.close();
    }
  });
});

describe.skipIf(process.platform !== "linux")("the CPU watchdog", () => {
  it("kills a busy process that averages more CPU than maxCpuCores over a second, failing its runs", async () => {
    const pool = new ProcessSandbox({ maxCpuCores: 0.01 }); // a spinning run gets little CPU on a loaded machine;
    try {
      const spin =
        "module.exports = () => { const end = Date.now() + 3000; while (Date.now() < end) {} return 1; }";
      const result = await pool.run({ tenantId: newTenant(), code: spin, input: {}, timeoutMs: 5000 });
      expect(result).toEqual({
        ok: false,
        error: {
          kind: "crashed",
          message: "the sandbox process was stopped for using more CPU than its runs may",
        },
      });
    } finally {
      await pool.close();
    }
  });

  it("leaves a process that is idle and quiet alone", async () => {
    const tenantId = newTenant();
    const code =
      "module.exports = () => { const a = []; for (let i = 0; i < 2e5; i++) a.push({ i }); return a.length; }";
    expect(await sandbox.run({ tenantId, code, input: {}, timeoutMs: 5000 })).toEqual({
      ok: true,
      value: 2e5,
    });
    const pid = sandbox.pidOf(tenantId, code);
    await sleep(1000);
    expect(sandbox.pidOf(tenantId, code)).toBe(pid);
  });
});
