/**
 * Escape attempts against the local code sandbox. Each test tries one way out and then checks that the
 * sandbox still serves a normal run and that this (host) process is unaffected.
 */
import { spawn } from "node:child_process";
import { type Dirent, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { SandboxResult } from "#shared/ports/sandbox.ts";
import { ProcessSandbox } from "#shared/sandbox/pool.ts";
import {
  childArguments,
  childFiles,
  childSpawnOptions,
  DEFAULT_CHILD_SCRIPT,
  sandboxPackageFiles,
} from "#shared/sandbox/spawn.ts";

const SECRETS = {
  AWS_SECRET_ACCESS_KEY: "host-aws-secret-4f2b9c",
  SVC_ROOT_KEY: "key_root_host-secret-81d0e7",
  TABLE_NAME: "svc-host-table-secret-5a1c",
};
const saved: Record<string, string | undefined> = {};
let sandbox: ProcessSandbox;

beforeAll(async () => {
  for (const [name, value] of Object.entries(SECRETS)) {
    saved[name] = process.env[name];
    process.env[name] = value;
  }
  sandbox = new ProcessSandbox();
  await sandbox.warm();
});

afterAll(async () => {
  await sandbox.close();
  for (const [name, value] of Object.entries(saved)) {
    if (value === undefined) delete process.env[name];
    else process.env[name] = value;
  }
});

const TENANT = "tenant-escapes";
const HEALTHY = "module.exports = (req) => ({ double: req.n * 2, clean: ({}).polluted === undefined });";

function attempt(code: string, timeoutMs = 2000, tenantId = TENANT): Promise<SandboxResult> {
  return sandbox.run({ tenantId, code, input: { n: 1 }, timeoutMs });
}

/** The sandbox still runs code (also for the attacker's tenant) and the host is as it was. */
async function expectHealthy(): Promise<void> {
  for (const tenantId of [TENANT, "tenant-bystander"]) {
    const result = await sandbox.run({ tenantId, code: HEALTHY, input: { n: 21 }, timeoutMs: 2000 });
    expect(result).toEqual({ ok: true, value: { double: 42, clean: true } });
  }
  expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  expect(Object.getOwnPropertyNames(Object.prototype)).not.toContain("polluted");
  expect(process.env.SVC_ROOT_KEY).toBe(SECRETS.SVC_ROOT_KEY);
}

const leaksNoSecret = (result: SandboxResult) => {
  const text = JSON.stringify(result);
  for (const secret of Object.values(SECRETS)) expect(text).not.toContain(secret);
};

/**
 * Runs `body` as a script under exactly the sandbox's flags and spawn options: what code that got out of
 * the vm context (into the child's own realm, with `require`) could still do.
 */
async function escapedProbe(body: string): Promise<Record<string, unknown>> {
  const dir = await mkdtemp(join(tmpdir(), "sandbox-probe-"));
  const script = join(dir, "probe.mjs");
  writeFileSync(
    script,
    `import { createRequire } from "node:module";
const require = createRequire(import.meta.url);
const attempt = async (f) => { try { return { ok: true, value: String(await f()).slice(0, 200) }; } catch (e) { return { ok: false, code: e?.code ?? e?.name }; } };
const results = {};
${body}
process.send(results, () => process.exit(0));`,
  );
  try {
    const child = spawn(process.execPath, childArguments(script, 64), childSpawnOptions());
    return await new Promise((done, fail) => {
      child.once("message", (message) => done(message as Record<string, unknown>));
      child.once("exit", (code) => fail(new Error(`probe exited with ${code}`)));
    });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const denied = { ok: false, code: "ERR_ACCESS_DENIED" };

function findNativeAddon(): string {
  const roots = [resolve("node_modules/lightningcss-linux-x64-gnu"), resolve("node_modules/@rolldown")];
  const stack = [...roots];
  while (stack.length > 0) {
    const dir = stack.pop() as string;
    let entries: Dirent[];
    try {
      entries = readdirSync(dir, { withFileTypes: true });
    } catch {
      continue;
    }
    for (const entry of entries) {
      if (entry.isFile() && entry.name.endsWith(".node")) return join(dir, entry.name);
      if (entry.isDirectory()) stack.push(join(dir, entry.name));
    }
  }
  // None installed: a fake one still shows the loader refusing before it reads anything.
  const fake = join(tmpdir(), "sandbox-fake-addon.node");
  writeFileSync(fake, "not really an addon");
  return fake;
}

describe("the host's environment", () => {
  it("is out of reach of the code by any route", async () => {
    const code = `module.exports = (req) => {
      const tries = {
        process: () => process.env,
        globalProcess: () => globalThis.process.env,
        sloppyThis: () => (function () { return this; })().process.env,
        requireProcess: () => require("process").env,
        functionConstructor: () => req.constructor.constructor("return process")().env,
        hostFunction: () => Buffer.constructor("return process")().env,
        asyncFunction: () => (async function () {}).constructor("return process")(),
        eval: () => eval("process").env,
        module: () => module.constructor._load("process").env,
      };
      const out = {};
      for (const [name, f] of Object.entries(tries)) {
        try { out[name] = JSON.stringify(f()) ?? "undefined"; } catch (e) { out[name] = e.name; }
      }
      return out;
    };`;

    const result = await attempt(code);

    leaksNoSecret(result);
    expect(result).toEqual({
      ok: true,
      value: {
        process: "ReferenceError",
        globalProcess: "TypeError",
        sloppyThis: "TypeError",
        requireProcess: "Error",
        functionConstructor: "EvalError",
        hostFunction: "EvalError",
        asyncFunction: "EvalError",
        eval: "EvalError",
        module: "TypeError",
      },
    });
    await expectHealthy();
  });

  it.skipIf(process.platform !== "linux")(
    "is not in the sandbox process at all (but Node's IPC setup)",
    async () => {
      const code = "module.exports = () => 1";
      await attempt(code);
      const pid = sandbox.pidOf(TENANT, code) ?? 0;

      const environ = readFileSync(`/proc/${pid}/environ`, "utf8");
      const argv = readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0");

      expect(environ.split("\0").filter(Boolean)).toEqual([
        "NODE_CHANNEL_FD=3",
        "NODE_CHANNEL_SERIALIZATION_MODE=json",
      ]);
      // Reads of its own scripts and of the package files beside them (public code), each named: nothing else.
      const packageDir = join(dirname(DEFAULT_CHILD_SCRIPT), "sandbox-packages");
      const packageFiles = sandboxPackageFiles(DEFAULT_CHILD_SCRIPT);
      expect(packageFiles.length).toBeGreaterThan(1);
      expect(packageFiles.every((file) => file.startsWith(`${packageDir}/`))).toBe(true);
      expect(argv.filter((arg) => arg.startsWith("--allow-"))).toEqual(
        [...childFiles(DEFAULT_CHILD_SCRIPT), ...packageFiles].map((file) => `--allow-fs-read=${file}`),
      );
      expect(argv).toEqual(
        expect.arrayContaining(["--no-addons", "--disallow-code-generation-from-strings"]),
      );
      await expectHealthy();
    },
  );

  it("stays hidden from code that got out of the vm context", async () => {
    const results = await escapedProbe(`
      results.env = Object.keys(process.env);
      results.ownEnviron = await attempt(() => require("node:fs").readFileSync("/proc/self/environ", "utf8"));
      results.hostEnviron = await attempt(() => require("node:fs").readFileSync("/proc/" + process.ppid + "/environ", "utf8"));
    `);

    expect(results).toEqual({ env: [], ownEnviron: denied, hostEnviron: denied });
    await expectHealthy();
  });
});

describe("the file system", () => {
  it("cannot be required, imported or bound by the code", async () => {
    const code = `module.exports = async () => {
      const out = [];
      for (const name of ["fs", "node:fs", "fs/promises", "node:fs/promises"]) {
        try { require(name); out.push("loaded " + name); } catch (e) { out.push(e.name); }
      }
      try { await import("node:fs"); out.push("imported"); } catch (e) { out.push(e.code); }
      try { process.binding("fs"); out.push("bound"); } catch (e) { out.push(e.name); }
      try { require("url").pathToFileURL("/etc/passwd").href; out.push(typeof require("url").fileURLToPath); } catch (e) { out.push(e.name); }
      return out;
    };`;

    const result = await attempt(code);

    expect(result).toEqual({
      ok: true,
      value: [
        "Error",
        "Error",
        "Error",
        "Error",
        "ERR_VM_DYNAMIC_IMPORT_CALLBACK_MISSING",
        "ReferenceError",
        "function",
      ],
    });
    await expectHealthy();
  });

  it("is closed to code that got out of the vm context, but for the child script itself", async () => {
    const results = await escapedProbe(`
      const fs = require("node:fs");
      results.passwd = await attempt(() => fs.readFileSync("/etc/passwd", "utf8"));
      results.repo = await attempt(() => fs.readFileSync(${JSON.stringify(resolve("package.json"))}, "utf8"));
      results.childScript = await attempt(() => fs.readFileSync(${JSON.stringify(DEFAULT_CHILD_SCRIPT)}, "utf8"));
      results.listRoot = await attempt(() => fs.readdirSync("/"));
      results.promises = await attempt(() => fs.promises.readFile("/etc/hostname"));
      results.stream = await attempt(() => new Promise((ok, ko) => fs.createReadStream("/etc/hostname").on("data", ok).on("error", ko)));
      results.write = await attempt(() => fs.writeFileSync(${JSON.stringify(join(tmpdir(), "sandbox-escape-write"))}, "x"));
      results.symlink = await attempt(() => fs.symlinkSync("/etc/passwd", ${JSON.stringify(join(tmpdir(), "sandbox-escape-link"))}));
      results.binding = await attempt(() => process.binding("fs"));
    `);

    expect(results).toEqual({
      passwd: denied,
      repo: denied,
      childScript: denied,
      listRoot: denied,
      promises: denied,
      stream: denied,
      write: denied,
      symlink: denied,
      binding: denied,
    });
    await expectHealthy();
  });
});

describe("child processes and workers", () => {
  it("cannot be required by the code", async () => {
    const code = `module.exports = () => ["child_process", "node:child_process", "worker_threads", "cluster"].map((name) => {
      try { require(name); return "loaded"; } catch (e) { return e.message.slice(0, 30); }
    });`;

    const result = await attempt(code);

    expect(result.ok && result.value).toHaveLength(4);
    for (const message of result.ok ? (result.value as string[]) : [])
      expect(message).toMatch(/^Cannot require '/);
    await expectHealthy();
  });

  it("cannot be started by code that got out of the vm context", async () => {
    const results = await escapedProbe(`
      const cp = require("node:child_process");
      results.spawnSync = await attempt(() => cp.spawnSync("id").status);
      results.execSync = await attempt(() => cp.execSync("id"));
      results.spawn = await attempt(() => cp.spawn("id").pid);
      results.worker = await attempt(() => new (require("node:worker_threads").Worker)("1", { eval: true }));
      results.inspector = await attempt(() => require("node:inspector").open(0));
    `);

    expect(results).toEqual({
      spawnSync: denied,
      execSync: denied,
      spawn: denied,
      worker: denied,
      inspector: denied,
    });
    await expectHealthy();
  });
});

describe("native addons", () => {
  const addon = findNativeAddon();

  it("cannot be required by the code, nor loaded as an OpenSSL engine", async () => {
    const code = `module.exports = () => {
      const out = [];
      try { require(${JSON.stringify(addon)}); out.push("loaded"); } catch (e) { out.push(e.message.slice(0, 16)); }
      out.push(typeof require("crypto").setEngine);
      return out;
    };`;

    const result = await attempt(code);

    expect(result).toEqual({ ok: true, value: ["Cannot require '", "undefined"] });
    await expectHealthy();
  });

  it("cannot be loaded by code that got out of the vm context", async () => {
    const results = await escapedProbe(`
      results.dlopen = await attempt(() => process.dlopen({ exports: {} }, ${JSON.stringify(addon)}));
      results.require = await attempt(() => require(${JSON.stringify(addon)}));
      results.engine = await attempt(() => require("node:crypto").setEngine(${JSON.stringify(addon)}));
    `);

    expect(results.dlopen).toEqual({ ok: false, code: "ERR_DLOPEN_DISABLED" });
    expect(results.require).toMatchObject({ ok: false });
    expect(results.engine).toEqual({ ok: false, code: "ERR_CRYPTO_CUSTOM_ENGINE_NOT_SUPPORTED" });
    await expectHealthy();
  });
});

describe("runaway code", () => {
  it.each([
    ["a synchronous infinite loop", "module.exports = () => { while (true) {} }"],
    ["an infinite loop while loading", "while (true) {} module.exports = () => 1"],
    ["an asynchronous infinite loop", "module.exports = async () => { for (;;) await null; }"],
    ["a promise that never settles", "module.exports = () => new Promise(() => {})"],
    ["Atomics.wait", "module.exports = () => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0)"],
  ])("stops %s at the timeout", async (_, code) => {
    const result = await attempt(code, 300);

    expect(result).toMatchObject({ ok: false, error: { kind: "timeout" } });
    await expectHealthy();
  });

  it("stops a heap memory bomb", async () => {
    const code =
      "module.exports = () => { const a = []; for (;;) a.push(new Array(100000).fill(Math.random())); }";

    const result = await attempt(code, 10_000);

    expect(result).toMatchObject({ ok: false, error: { kind: expect.stringMatching(/^(memory|crashed)$/) } });
    await expectHealthy();
  });

  it("stops an ArrayBuffer memory bomb, which the heap limit does not see", async () => {
    const code =
      "module.exports = () => { const a = []; for (;;) a.push(new Uint8Array(64 * 1024 * 1024).fill(1)); }";

    const result = await attempt(code, 10_000);

    expect(result).toMatchObject({ ok: false, error: { kind: "memory" } });
    await expectHealthy();
  });

  it("bounds the code's work in the sandbox process itself, so a process left alone by its host exits", async () => {
    const child = spawn(process.execPath, childArguments(DEFAULT_CHILD_SCRIPT, 64), childSpawnOptions());
    await new Promise((ready) => child.once("message", ready));
    const exited = new Promise<boolean>((done) => child.once("exit", () => done(true)));
    const code = "module.exports = async () => { for (;;) await null; }";

    child.send({
      t: "run",
      id: 1,
      hash: "h",
      code,
      input: "null",
      svc: false,
      timeoutMs: 300,
      maxResultChars: 100,
    });
    child.disconnect(); // as if the host were killed: nobody will kill this process
    const exitedAlone = await Promise.race([exited, sleep(3000).then(() => false)]);
    child.kill("SIGKILL");

    expect(exitedAlone).toBe(true);
    await expectHealthy();
  });

  it("survives stack overflows and unhandled rejections", async () => {
    const overflow = await attempt("const f = () => f(); module.exports = () => f();");
    const unhandled = await attempt(
      "module.exports = () => { Promise.reject(new Error('x')); return 'ok'; }",
    );

    expect(overflow).toMatchObject({ ok: false, error: { kind: "thrown", name: "RangeError" } });
    expect(unhandled).toEqual({ ok: true, value: "ok" });
    await expectHealthy();
  });
});

describe("prototype pollution", () => {
  it("reaches neither the next run of the same code nor the host", async () => {
    // Strict, so that writes to frozen objects throw instead of failing silently.
    const code = `"use strict";
    module.exports = (req) => {
      if (req.check) {
        const h = require("crypto").createHash("sha256");
        return {
          unchanged: [
            ({}).polluted,
            ({}).x,
            Object.getPrototypeOf(Buffer.prototype).polluted,
            require("crypto").createHash.polluted,
            Object.getPrototypeOf(require("util")),
            typeof stash,
          ].map(String),
          arrays: [1, 2].includes.toString().includes("native"),
          json: JSON.stringify({ a: 1 }),
          buffer: Buffer.from("a").toString("hex"),
          hash: h.update("a").digest("hex").slice(0, 8),
          moduleExport: typeof require("crypto").randomUUID(),
        };
      }
      const tries = [
        () => { Object.prototype.polluted = 1; },
        () => { ({}).__proto__.x = 1; },
        () => { Array.prototype.includes = () => "polluted"; },
        () => { JSON.stringify = () => "polluted"; },
        () => { globalThis.stash = "left for the next run"; },
        () => { Buffer.prototype.toString = () => "polluted"; },
        () => { Object.getPrototypeOf(Buffer.prototype).polluted = 1; },
        () => { require("crypto").randomUUID = () => 1; },
        () => { require("crypto").createHash.polluted = 1; },
        () => { Object.getPrototypeOf(require("crypto").createHash("sha256")).digest = () => "polluted"; },
        () => { let p = require("crypto").createHash("sha256"); while (p) { p.emit = () => "polluted"; p = Object.getPrototypeOf(p); } },
        () => { Object.getPrototypeOf(require("util")).polluted = 1; },
        () => { req.constructor.constructor("return process")().exit(1); },
      ];
      return tries.map((f) => { try { f(); return "done"; } catch (e) { return e.name; } });
    };`;
    await attempt(code);
    const pid = sandbox.pidOf(TENANT, code);

    const polluted = await sandbox.run({ tenantId: TENANT, code, input: {}, timeoutMs: 2000 });
    const next = await sandbox.run({ tenantId: TENANT, code, input: { check: true }, timeoutMs: 2000 });

    // The context's own intrinsics may be changed (for that run only); this realm's objects may not.
    expect(polluted).toEqual({
      ok: true,
      value: [
        "done",
        "TypeError", // --disable-proto=delete: there is no __proto__ accessor
        "done",
        "done",
        "done",
        "TypeError",
        "TypeError",
        "TypeError",
        "TypeError",
        "TypeError",
        "TypeError",
        "TypeError",
        "EvalError",
      ],
    });
    expect(next).toEqual({
      ok: true,
      value: {
        unchanged: ["undefined", "undefined", "undefined", "undefined", "null", "undefined"],
        arrays: true,
        json: '{"a":1}',
        buffer: "61",
        hash: "ca978112",
        moduleExport: "string",
      },
    });
    expect(sandbox.pidOf(TENANT, code)).toBe(pid);
    await expectHealthy();
  });

  it("gives stack frames of host functions no function or receiver to hold", async () => {
    const code = `module.exports = () => {
      Error.prepareStackTrace = (error, frames) => frames.map((f) => {
        const fn = f.getFunction();
        const self = f.getThis();
        return (fn === undefined || fn instanceof Function) && (self === undefined || self === null || self instanceof Object);
      });
      try { Buffer.from({ length: 1, get 0() { throw new Error("x"); } }); } catch (e) { return e.stack; }
    };`;

    const result = await attempt(code);

    expect(result.ok && Array.isArray(result.value) && result.value.length > 3).toBe(true);
    expect(result).toEqual({ ok: true, value: expect.not.arrayContaining([false]) });
    await expectHealthy();
  });
});

describe("network and other ways out", () => {
  it("gives the code no network module or global but the host-carried fetch, a function of its own context", async () => {
    const code = `module.exports = () => ({
      modules: ["net", "http", "https", "http2", "dgram", "dns", "tls", "inspector"].map((name) => {
        try { require(name); return "loaded"; } catch { return "refused"; }
      }),
      globals: [typeof WebSocket, typeof XMLHttpRequest, typeof EventSource],
      fetchOfThisContext: Object.getPrototypeOf(fetch) === Function.prototype && fetch === globalThis.fetch,
    });`;

    const result = await attempt(code);

    expect(result).toEqual({
      ok: true,
      value: {
        modules: Array(8).fill("refused"),
        globals: Array(3).fill("undefined"),
        fetchOfThisContext: true,
      },
    });
    await expectHealthy();
  });

  it("refuses WebAssembly and code generation from strings", async () => {
    const code = `module.exports = async () => {
      const out = [];
      try { await WebAssembly.compile(new Uint8Array([0, 97, 115, 109, 1, 0, 0, 0])); out.push("compiled"); } catch (e) { out.push(e.name); }
      try { out.push(new Function("return 1")()); } catch (e) { out.push(e.name); }
      try { out.push(require("util").promisify.constructor("return 1")()); } catch (e) { out.push(e.name); }
      return out;
    };`;

    const result = await attempt(code);

    expect(result).toEqual({ ok: true, value: ["CompileError", "EvalError", "EvalError"] });
    await expectHealthy();
  });
});
