import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { freePort } from "#test/support/ports.ts";
import { READY_MS, waitFor } from "#test/support/wait.ts";

let dev: ChildProcess | undefined;
afterAll(() => {
  dev?.kill("SIGKILL");
});

/** The fenced blocks of README.md's "Try it" section, with their language. */
function tryItBlocks(): { lang: string; code: string }[] {
  const readme = readFileSync("README.md", "utf8");
  const section = /^## Try it\n([\s\S]*?)^## /m.exec(readme)?.[1];
  if (!section) throw new Error("README.md has no Try it section");
  return [...section.matchAll(/^```(\w*)\n([\s\S]*?)^```/gm)].map((m) => ({
    lang: m[1] ?? "",
    code: m[2] ?? "",
  }));
}

const PASTED = /^(SVC_URL|ROOT|MGT|PVT|PUB)=\S+$/gm;

describe("npm run dev and README's Try it", () => {
  it(
    "prints ready-to-paste keys, and the README's commands run verbatim on them",
    async () => {
      const blocks = tryItBlocks();
      const shell = blocks.filter((b) => b.lang === "bash");
      // The section starts the dev mode, then shows what it prints (text), then the commands to paste.
      expect(shell[0]?.code.trim()).toBe("npm run dev");
      expect(shell.length).toBeGreaterThan(1);

      // Where a master key file would go by default: dev mode keeps its throwaway one in its temporary directory.
      const configHome = mkdtempSync(join(tmpdir(), "svc-dev-config-"));
      const port = await freePort();
      let output = "";
      // What `npm run dev` runs (package.json), without npm in between.
      dev = spawn(process.execPath, ["--disable-proto=throw", "--import", "tsx", "scripts/dev.ts"], {
        env: {
          ...process.env,
          PORT: String(port),
          SVC_DYNAMODB_ENDPOINT: "",
          SVC_ROOT_KEY: "",
          SVC_MASTER_KEY_FILE: "",
          XDG_CONFIG_HOME: configHome,
        },
        stdio: ["ignore", "pipe", "pipe"],
      });
      dev.stdout?.on("data", (c: Buffer) => {
        output += c.toString();
      });
      dev.stderr?.on("data", (c: Buffer) => {
        output += c.toString();
      });
      await waitFor(() => /^PUB=\S+$/m.test(output), READY_MS).catch((error: unknown) => {
        throw new Error(`${String(error)}; output:\n${output}`);
      });
      const pasted = output.match(PASTED) ?? [];
      expect(pasted.map((line) => line.split("=")[0])).toEqual(["SVC_URL", "ROOT", "MGT", "PVT", "PUB"]);
      expect(pasted[0]).toBe(`SVC_URL=http://127.0.0.1:${port}`);
      expect(output).toMatch(/DEVELOPMENT MODE: in memory/);

      // What a reader does: paste the printed lines, then the README's commands, verbatim.
      const script = [...pasted, ...shell.slice(1).map((b) => b.code)].join("\n");
      const run = spawnSync("bash", ["-euo", "pipefail", "-c", script], {
        encoding: "utf8",
        timeout: 60_000,
      });
      const exited = new Promise<number | null>((resolve) => dev?.once("exit", (code) => resolve(code)));
      dev.kill("SIGINT");
      const code = await exited;

      expect(run.stderr).toBe("");
      expect(run.status).toBe(0);
      // The answers, pretty-printed by jq, one compact JSON value a line.
      const answers = spawnSync("jq", ["-c", "."], { input: run.stdout, encoding: "utf8" })
        .stdout.trim()
        .split("\n")
        .map((line) => JSON.parse(line) as Record<string, unknown>);
      const [created, masked, revealed, logs] = answers;
      // 1. created, answered masked
      expect(created).toMatchObject({ type: "card", data: { number: "XXXXXXXXXXXX4242" } });
      // 2. read back with the private key, masked
      expect(masked).toMatchObject({ id: created?.id, data: { number: "XXXXXXXXXXXX4242" } });
      // 3. read back revealed by the application made with the management key
      expect(revealed).toMatchObject({ id: created?.id, data: { number: "4242424242424242" } });
      // 4. the audit log has the creation and the reads, and no card number
      const entries = (logs?.data ?? []) as { entity_id: string; operation: string }[];
      expect(entries.filter((e) => e.entity_id === created?.id).length).toBeGreaterThanOrEqual(3);
      expect(JSON.stringify(logs)).not.toContain("4242424242424242");
      expect(code).toBe(0);
      expect(readdirSync(configHome)).toEqual([]);
    },
    READY_MS + 90_000,
  );
});
