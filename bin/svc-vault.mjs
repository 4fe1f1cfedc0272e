#!/usr/bin/env node
// `npx svc-vault …`: runs the TypeScript CLI (scripts/cli/main.ts) through tsx, as the project's other scripts run.
import { spawnSync } from "node:child_process";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const result = spawnSync(
  process.execPath,
  [
    "--disable-proto=throw",
    "--import",
    import.meta.resolve("tsx"),
    join(root, "scripts/cli/main.ts"),
    ...process.argv.slice(2),
  ],
  { stdio: "inherit", cwd: process.cwd() },
);
process.exit(result.status ?? 2);
