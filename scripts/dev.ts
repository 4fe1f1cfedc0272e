/**
 * `npm run dev`: `npm start` (the same script, so the same start path) with development settings: DynamoDB
 * Local in memory, a throwaway data directory, the test clock on and private destinations allowed. Once it is
 * ready it creates a tenant, a public and a private application through the API with the root key, and prints
 * ready-to-paste `SVC_URL=`, `ROOT=`, `MGT=`, `PVT=` and `PUB=` lines (as `vault server -dev` prints its token).
 * Everything is gone when it stops: it is for development only.
 */
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { newApiKey } from "#shared/ids.ts";
import { post } from "./api-call.ts";

const START_SCRIPT = resolve(import.meta.dirname, "start.ts");
/** What start.ts prints once the API answers; the URL after it is the one it listens on. */
const READY = /ready at (http:\/\/\S+)/;

/** The development tenant: what README's "Try it" uses. */
const PUBLIC_APP = { name: "dev-browser", type: "public", permissions: ["token:create", "token:update"] };
const PRIVATE_APP = {
  name: "dev-server",
  type: "private",
  // No access rules: reads are masked, token:use reveals (through proxies and reactors).
  permissions: ["token:create", "token:read", "token:update", "token:delete", "token:use"],
};

/** The tenant and its keys, made through the API as any client would. */
async function bootstrap(baseUrl: string, rootKey: string) {
  type Created = { management_key: string; key: string };
  const mgt = (await post<Created>(baseUrl, "/tenants", rootKey, { name: "Dev" })).management_key;
  const pub = await post<Created>(baseUrl, "/applications", mgt, PUBLIC_APP);
  const pvt = await post<Created>(baseUrl, "/applications", mgt, PRIVATE_APP);
  return { mgt, pub: pub.key, pvt: pvt.key };
}

function banner(
  baseUrl: string,
  rootKey: string,
  keys: { mgt: string; pub: string; pvt: string },
  dataDir: string,
) {
  return [
    "",
    "==> DEVELOPMENT MODE: in memory (everything is lost when it stops), test clock on, private destinations",
    "    allowed, keys printed below. Never put real data in it; `npm start` is the persistent local service.",
    `    E-mail (invitations) goes to ${join(dataDir, "outbox")}.`,
    "",
    "Paste these into a shell (README.md, Try it):",
    "",
    `SVC_URL=${baseUrl}`,
    `ROOT=${rootKey}`,
    `MGT=${keys.mgt}`,
    `PVT=${keys.pvt}`,
    `PUB=${keys.pub}`,
    "",
  ].join("\n");
}

function main() {
  const dataDir = mkdtempSync(join(tmpdir(), "svc-dev-"));
  const rootKey = newApiKey("root");
  const child = spawn(
    process.execPath,
    ["--disable-proto=throw", "--import", "tsx", START_SCRIPT, "--in-memory"],
    {
      env: {
        ...process.env,
        SVC_DATA_DIR: dataDir,
        // Throwaway like the data: kept with it (not under the user's configuration directory), removed with it.
        SVC_MASTER_KEY_FILE: join(dataDir, "master.key"),
        SVC_ROOT_KEY: rootKey,
        SVC_TEST_CLOCK: "1",
        SVC_PROXY_ALLOW_PRIVATE: "1",
      },
      stdio: ["ignore", "pipe", "inherit"],
    },
  );
  let output = "";
  let ready = false;
  let failed = false;
  child.stdout?.on("data", (chunk: Buffer) => {
    process.stdout.write(chunk);
    if (ready) return;
    output += chunk.toString();
    const url = READY.exec(output)?.[1];
    if (!url) return;
    ready = true;
    bootstrap(url, rootKey).then(
      (keys) => console.log(banner(url, rootKey, keys, dataDir)),
      (error: unknown) => {
        console.error(
          `Could not create the development tenant: ${error instanceof Error ? error.message : error}`,
        );
        failed = true;
        child.kill("SIGTERM");
      },
    );
  });
  for (const signal of ["SIGINT", "SIGTERM"] as const) process.on(signal, () => child.kill(signal));
  child.on("exit", (code, signal) => {
    rmSync(dataDir, { recursive: true, force: true });
    process.exit(failed ? 1 : (code ?? (signal ? 1 : 0)));
  });
}

main();
