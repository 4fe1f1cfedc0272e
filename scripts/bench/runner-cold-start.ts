/**
 * The runner-cold-start scenario (docs/performance.md, "Runner cold start"): a tenant's runner function started
 * from nothing, with and without the package set next to it. The runner bundle is built as CDK builds it
 * (lib/bundling.ts) into a temporary directory, with child.mjs and sandbox-packages/ beside it; each sample is
 * a new Node process that
 * - imports the bundle (the Lambda init: the handler module and its blank spare sandbox process): `init`;
 * - runs a formula that requires nothing: `first_run`;
 * - (with packages) runs a formula that requires every package: `first_run_all_packages` (each package read,
 *   compiled and evaluated for the first time), then the same formula again: `warm_run_all_packages`.
 */
import { spawn } from "node:child_process";
import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { bundleGroup, REPO_ROOT } from "#lib/bundling.ts";
import { buildSandboxPackages, SANDBOX_PACKAGES } from "#lib/sandbox-packages.ts";
import { LAMBDA_NODE_OPTIONS } from "#shared/node-options.ts";
import { CHILD_FILES } from "#shared/sandbox/spawn.ts";
import { median } from "./load.ts";

export interface ColdStartSample {
  init_ms: number;
  first_run_ms: number;
  first_run_all_packages_ms?: number;
  warm_run_all_packages_ms?: number;
}

export interface RunnerColdStart {
  samples: number;
  /** Medians over the samples. */
  without_packages: ColdStartSample;
  with_packages: ColdStartSample;
  /** Bytes of the built package files (what the runner bundle grows by). */
  packages_bytes: number;
}

const TRIVIAL = "module.exports = async () => ({ raw: { ok: true } });";
const ALL_PACKAGES = `${SANDBOX_PACKAGES.map((p, i) => `const p${i} = require(${JSON.stringify(p.specifier)});`).join("\n")}
module.exports = async () => ({ raw: { loaded: [${SANDBOX_PACKAGES.map((_, i) => `typeof p${i}`).join(", ")}] } });`;

/** Runs in the sample process: timings as one JSON line on stdout. */
const sampleScript = (bundle: string, withPackages: boolean) => `
const started = performance.now();
const { handler } = await import(${JSON.stringify(bundle)});
const init = performance.now() - started;
const run = async (code) => {
  const at = performance.now();
  const result = await handler({ tenantId: crypto.randomUUID(), code, input: {}, timeoutMs: 10000 });
  if (!result.ok) throw new Error(JSON.stringify(result.error));
  return performance.now() - at;
};
const out = { init_ms: init, first_run_ms: await run(${JSON.stringify(TRIVIAL)}) };
if (${withPackages}) {
  const tenantId = crypto.randomUUID();
  const code = ${JSON.stringify(ALL_PACKAGES)};
  let at = performance.now();
  let result = await handler({ tenantId, code, input: {}, timeoutMs: 10000 });
  if (!result.ok) throw new Error(JSON.stringify(result.error));
  out.first_run_all_packages_ms = performance.now() - at;
  at = performance.now();
  result = await handler({ tenantId, code, input: {}, timeoutMs: 10000 });
  out.warm_run_all_packages_ms = performance.now() - at;
}
console.log(JSON.stringify(out));
process.exit(0);
`;

function runSample(dir: string, withPackages: boolean): Promise<ColdStartSample> {
  return new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      [
        ...LAMBDA_NODE_OPTIONS.split(" "),
        "--input-type=module",
        "-e",
        sampleScript(join(dir, "index.mjs"), withPackages),
      ],
      { cwd: dir, env: { PATH: process.env.PATH, LOG_LEVEL: "SILENT", POWERTOOLS_LOG_LEVEL: "SILENT" } },
    );
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk: Buffer) => {
      stdout += chunk.toString();
    });
    child.stderr.on("data", (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    child.on("exit", (code) => {
      const line = stdout.trim().split("\n").pop() ?? "";
      if (code === 0 && line.startsWith("{")) resolve(JSON.parse(line) as ColdStartSample);
      else reject(new Error(`runner cold-start sample failed (${code}): ${stderr.slice(-500)}`));
    });
  });
}

const medianOf = (samples: ColdStartSample[]): ColdStartSample => {
  const pick = (key: keyof ColdStartSample) => {
    const values = samples.map((s) => s[key]).filter((v): v is number => v !== undefined);
    return values.length ? Number(median(values).toFixed(1)) : undefined;
  };
  const out: ColdStartSample = { init_ms: pick("init_ms") ?? 0, first_run_ms: pick("first_run_ms") ?? 0 };
  const first = pick("first_run_all_packages_ms");
  const warm = pick("warm_run_all_packages_ms");
  if (first !== undefined) out.first_run_all_packages_ms = first;
  if (warm !== undefined) out.warm_run_all_packages_ms = warm;
  return out;
};

/** Builds the runner twice (with and without packages) and alternates `samples` cold starts of each. */
export async function measureRunnerColdStart(
  samples = 7,
  log: (line: string) => void = () => {},
): Promise<RunnerColdStart> {
  const root = mkdtempSync(join(tmpdir(), "svc-runner-cold-"));
  try {
    log("runner-cold-start: building the runner bundle and the packages…");
    const bundle = await bundleGroup("sandbox-runner");
    const dirs = { without: join(root, "without"), with: join(root, "with") };
    for (const dir of Object.values(dirs)) {
      mkdirSync(join(dir, "sandbox-packages"), { recursive: true });
      writeFileSync(join(dir, "index.mjs"), bundle.code);
      for (const file of CHILD_FILES) copyFileSync(join(REPO_ROOT, "shared/sandbox", file), join(dir, file));
      copyFileSync(
        join(REPO_ROOT, "shared/sandbox/sandbox-packages/reactor-errors.cjs"),
        join(dir, "sandbox-packages", "reactor-errors.cjs"),
      );
    }
    await buildSandboxPackages(join(dirs.with, "sandbox-packages", "built"));
    const builtDir = join(dirs.with, "sandbox-packages", "built");
    const packagesBytes = readdirSync(builtDir).reduce((sum, f) => sum + statSync(join(builtDir, f)).size, 0);
    const without: ColdStartSample[] = [];
    const withPackages: ColdStartSample[] = [];
    for (let i = 0; i < samples; i++) {
      log(`runner-cold-start: sample ${i + 1}/${samples}…`);
      without.push(await runSample(dirs.without, false));
      withPackages.push(await runSample(dirs.with, true));
    }
    return {
      samples,
      without_packages: medianOf(without),
      with_packages: medianOf(withPackages),
      packages_bytes: packagesBytes,
    };
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

export function describeRunnerColdStart(result: RunnerColdStart): string {
  const w = result.with_packages;
  const wo = result.without_packages;
  return [
    `runner cold start (median of ${result.samples}, new Node process each):`,
    `  without packages: init ${wo.init_ms} ms, first run ${wo.first_run_ms} ms`,
    `  with packages (${(result.packages_bytes / 1024).toFixed(0)} KiB beside the bundle): init ${w.init_ms} ms, ` +
      `first run ${w.first_run_ms} ms; first run requiring all ${SANDBOX_PACKAGES.length} packages ` +
      `${w.first_run_all_packages_ms} ms, again (warm process) ${w.warm_run_all_packages_ms} ms`,
  ].join("\n");
}
