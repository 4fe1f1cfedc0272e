/**
 * bundles: each function group's bundle as deployed (lib/bundling.ts: minified, no source map), its size, and its
 * cold import time: the median of COLD_IMPORTS fresh `node` processes, each timing `import()` of the bundle with
 * the environment of a Lambda in AWS mode (the module-scope work a cold start pays before the first request).
 */
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { bundleGroup, LAMBDA_IMPORT_ENV } from "#lib/bundling.ts";
import { FUNCTION_GROUPS } from "#shared/http/route.ts";
import { LAMBDA_NODE_OPTIONS } from "#shared/node-options.ts";
import { median } from "../load.ts";
import { renderTable } from "../tables.ts";

export const COLD_IMPORTS = 3;

/** Run by each fresh process: times the import alone (not Node's own start-up) and prints it. */
const IMPORT_SCRIPT =
  "const started = performance.now(); await import(process.argv[1]); " +
  "process.stdout.write(JSON.stringify({ ms: performance.now() - started }));";

export interface BundleFigures {
  group: string;
  bytes: number;
  cold_import_ms: number[];
  cold_import_median_ms: number;
}

/** One fresh process importing the bundle: how long the import took (ms). */
function coldImport(file: string): Promise<number> {
  return new Promise((resolve, reject) => {
    // Only PATH from this process: no SVC_* or AWS_* setting of the caller's shell leaks into the measurement.
    const child = spawn(
      process.execPath,
      [
        // As in Lambda, minus the source maps the bundle here does not have.
        ...LAMBDA_NODE_OPTIONS.split(" ").filter((flag) => flag !== "--enable-source-maps"),
        "--input-type=module",
        "-e",
        IMPORT_SCRIPT,
        pathToFileURL(file).href,
      ],
      { env: { PATH: process.env.PATH ?? "", ...LAMBDA_IMPORT_ENV }, stdio: ["ignore", "pipe", "pipe"] },
    );
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk: Buffer) => {
      stdout += chunk.toString();
    });
    child.stderr.on("data", (chunk: Buffer) => {
      stderr = (stderr + chunk.toString()).slice(-2000);
    });
    child.once("error", reject);
    child.once("exit", (code) => {
      try {
        if (code !== 0) throw new Error(`exit ${code}`);
        resolve((JSON.parse(stdout) as { ms: number }).ms);
      } catch (error) {
        reject(
          new Error(
            `importing ${file} failed (${error instanceof Error ? error.message : error}):\n${stderr}`,
          ),
        );
      }
    });
  });
}

export async function measureBundles(options: {
  log: (line: string) => void;
  check: () => void;
}): Promise<BundleFigures[]> {
  const dir = mkdtempSync(join(tmpdir(), "svc-bench-bundles-"));
  try {
    const figures: BundleFigures[] = [];
    for (const group of FUNCTION_GROUPS) {
      options.check();
      const { code } = await bundleGroup(group);
      const file = join(dir, `${group}.mjs`);
      writeFileSync(file, code);
      const times: number[] = [];
      for (let i = 0; i < COLD_IMPORTS; i++) times.push(Number((await coldImport(file)).toFixed(1)));
      const entry = {
        group,
        bytes: code.length,
        cold_import_ms: times,
        cold_import_median_ms: Number(median(times).toFixed(1)),
      };
      options.log(
        `bundles: ${group}: ${(entry.bytes / 1024).toFixed(0)} KiB, cold import ${times.join(", ")} ms (median ${entry.cold_import_median_ms})`,
      );
      figures.push(entry);
    }
    return figures;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

export function bundlesTable(figures: BundleFigures[]): string {
  const header = [
    "function group",
    "bundle KiB (minified, no source map)",
    `cold import ms (median of ${COLD_IMPORTS})`,
    "each run ms",
  ];
  const rows = figures.map((f) => [
    f.group,
    (f.bytes / 1024).toFixed(0),
    f.cold_import_median_ms.toFixed(0),
    f.cold_import_ms.map((ms) => ms.toFixed(0)).join(", "),
  ]);
  return renderTable(header, rows, new Set([1, 2]));
}
