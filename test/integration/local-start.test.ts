import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, inject, it } from "vitest";

let child: ChildProcess | undefined;
afterAll(() => {
  child?.kill("SIGKILL");
});

function waitFor(predicate: () => boolean, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  return new Promise((resolve, reject) => {
    const tick = () => {
      if (predicate()) return resolve();
      if (Date.now() > deadline) return reject(new Error("timed out"));
      setTimeout(tick, 100);
    };
    tick();
  });
}

describe("npm start (the local contract)", () => {
  it("starts DynamoDB Local and the API, prints the URL and generated root key, persists data, stops on Ctrl-C", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "svc-start-"));
    const port = 20_000 + Math.floor(Math.random() * 20_000);
    let output = "";
    child = spawn(process.execPath, ["--import", "tsx", "scripts/start.ts"], {
      env: {
        ...process.env,
        PORT: String(port),
        SVC_DATA_DIR: dataDir,
        SVC_DYNAMODB_ENDPOINT: "",
        SVC_ROOT_KEY: "",
      },
      stdio: ["ignore", "pipe", "pipe"],
    });
    child.stdout?.on("data", (c: Buffer) => {
      output += c.toString();
    });
    child.stderr?.on("data", (c: Buffer) => {
      output += c.toString();
    });

    await waitFor(() => output.includes("ready at"), 30_000).catch((error: unknown) => {
      throw new Error(`${String(error)}; output:\n${output}`);
    });
    const health = await fetch(`http://127.0.0.1:${port}/healthz`);
    const rootKey = readFileSync(join(dataDir, "root-key"), "utf8").trim();
    const tenant = await fetch(`http://127.0.0.1:${port}/tenants`, {
      method: "POST",
      headers: { "svc-api-key": rootKey, "content-type": "application/json" },
      body: JSON.stringify({ name: "Started" }),
    });
    const exited = new Promise<number | null>((resolve) => child?.once("exit", (code) => resolve(code)));
    child.kill("SIGINT");
    const code = await exited;

    expect(output).toContain(`http://127.0.0.1:${port}`);
    expect(output).toContain(rootKey);
    // Started without the flag, the script runs itself again with it (process integrity).
    expect(output).toContain("--disable-proto=throw");
    expect(health.status).toBe(200);
    expect(tenant.status).toBe(201);
    expect(statSync(join(dataDir, "root-key")).mode & 0o777).toBe(0o600);
    expect(statSync(join(dataDir, "dynamodb")).isDirectory()).toBe(true);
    expect(code).toBe(0);
  }, 60_000);

  it("names Java 17 in a clear error when java is missing", () => {
    const dataDir = mkdtempSync(join(tmpdir(), "svc-nojava-"));

    const run = spawnSync(process.execPath, ["--import", "tsx", "scripts/start.ts"], {
      env: {
        ...process.env,
        PATH: "/nonexistent",
        PORT: "0",
        SVC_DATA_DIR: dataDir,
        SVC_DYNAMODB_ENDPOINT: "",
      },
      encoding: "utf8",
      timeout: 20_000,
    });

    expect(run.status).toBe(1);
    expect(run.stderr).toContain("Java 17");
  });

  it("uses SVC_DYNAMODB_ENDPOINT instead of starting DynamoDB Local", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "svc-external-"));
    const port = 20_000 + Math.floor(Math.random() * 20_000);
    let output = "";
    const external = spawn(process.execPath, ["--import", "tsx", "scripts/start.ts"], {
      env: {
        ...process.env,
        PORT: String(port),
        SVC_DATA_DIR: dataDir,
        SVC_DYNAMODB_ENDPOINT: inject("dynamodbEndpoint"),
        SVC_ROOT_KEY: "key_root_external_0123456789",
      },
      stdio: ["ignore", "pipe", "pipe"],
    });
    child = external;
    external.stdout?.on("data", (c: Buffer) => {
      output += c.toString();
    });

    await waitFor(() => output.includes("ready at"), 30_000);
    const tenant = await fetch(`http://127.0.0.1:${port}/tenants`, {
      method: "POST",
      headers: { "svc-api-key": "key_root_external_0123456789", "content-type": "application/json" },
      body: JSON.stringify({ name: "External" }),
    });
    const exited = new Promise((resolve) => external.once("exit", resolve));
    external.kill("SIGINT");
    await exited;

    expect(output).toContain(`Using DynamoDB at ${inject("dynamodbEndpoint")}`);
    expect(output).not.toContain("Root key (generated");
    expect(tenant.status).toBe(201);
  }, 60_000);
});
