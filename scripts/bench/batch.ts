/**
 * The batch scenarios (issue 20):
 * - tokenize-batch: tokens per second through POST /tokenize with 25 requests per call against single
 *   POST /tokens, closed loop at BENCH_CONNECTIONS, BENCH_DURATION_S each after a short warm-up (target ≥ 4×);
 * - import: `svc-vault import` of a BENCH_IMPORT_LINES-line JSONL file (100,000) and of a tenth of it, in a Node
 *   process of its own, its RSS sampled from /proc every 100 ms: records per second and the memory ceiling of
 *   each, so that "flat in the file's size" is a comparison, not a claim.
 */
import { spawn } from "node:child_process";
import { once } from "node:events";
import { readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { CARD, cardBody, log, settings } from "./settings.ts";

export const BATCH_TARGET_RATIO = 4;
const PER_CALL = 25;

/** Tokens created per second by `connections` callers, each sending `body()` again as soon as it is answered. */
async function closedLoop(
  url: string,
  path: string,
  key: string,
  body: () => string,
  tokensPerCall: number,
  seconds: number,
) {
  const deadline = performance.now() + seconds * 1000;
  let tokens = 0;
  let failures = 0;
  const worker = async () => {
    while (performance.now() < deadline) {
      const res = await fetch(`${url}${path}`, {
        method: "POST",
        headers: { "svc-api-key": key, "content-type": "application/json" },
        body: body(),
      });
      await res.arrayBuffer();
      if (res.status === 201) tokens += tokensPerCall;
      else failures++;
    }
  };
  const started = performance.now();
  await Promise.all(Array.from({ length: settings.connections }, worker));
  return { perSecond: tokens / ((performance.now() - started) / 1000), failures };
}

export interface BatchFigures {
  single_per_s: number;
  batched_per_s: number;
  ratio: number;
  failures: number;
}

export async function measureTokenizeBatch(url: string, createKey: string): Promise<BatchFigures> {
  const batch = () => `[${Array.from({ length: PER_CALL }, cardBody).join(",")}]`;
  const warm = Math.min(3, settings.warmupSeconds);
  log(`tokenize-batch: warming up ${warm} s, then ${settings.durationSeconds} s of single POST /tokens…`);
  await closedLoop(url, "/tokens", createKey, cardBody, 1, warm);
  const single = await closedLoop(url, "/tokens", createKey, cardBody, 1, settings.durationSeconds);
  log(`tokenize-batch: ${settings.durationSeconds} s of POST /tokenize with ${PER_CALL} per call…`);
  await closedLoop(url, "/tokenize", createKey, batch, PER_CALL, warm);
  const batched = await closedLoop(url, "/tokenize", createKey, batch, PER_CALL, settings.durationSeconds);
  return {
    single_per_s: single.perSecond,
    batched_per_s: batched.perSecond,
    ratio: batched.perSecond / single.perSecond,
    failures: single.failures + batched.failures,
  };
}

export function describeTokenizeBatch(f: BatchFigures): string {
  const pass = f.ratio >= BATCH_TARGET_RATIO;
  return [
    `tokenize-batch (${settings.connections} connections, closed loop):`,
    `  single POST /tokens:        ${Math.round(f.single_per_s)} tokens/s`,
    `  POST /tokenize, ${PER_CALL} per call: ${Math.round(f.batched_per_s)} tokens/s`,
    `  ratio ${f.ratio.toFixed(1)}× (target ≥ ${BATCH_TARGET_RATIO}×) ${pass ? "PASS" : "FAIL"}${f.failures ? `; ${f.failures} calls failed` : ""}`,
  ].join("\n");
}

export interface ImportFigures {
  lines: number;
  records_per_s: number;
  peak_rss_mb: number;
  exit_code: number | null;
}

/** kB of a /proc/<pid>/status field (VmHWM: the peak resident set so far), or 0 once the process is gone. */
function procKb(pid: number, field: string): number {
  try {
    const match = new RegExp(`^${field}:\\s+(\\d+) kB`, "m").exec(
      readFileSync(`/proc/${pid}/status`, "utf8"),
    );
    return match ? Number(match[1]) : 0;
  } catch {
    return 0;
  }
}

async function importOnce(url: string, key: string, dir: string, lines: number): Promise<ImportFigures> {
  const file = join(dir, `import-${lines}.jsonl`);
  const line = `${JSON.stringify({ type: "card", data: CARD })}\n`;
  writeFileSync(file, line.repeat(lines));
  const started = performance.now();
  const child = spawn(
    process.execPath,
    ["--disable-proto=throw", "--import", "tsx", "scripts/cli/main.ts", "import", file, "--url", url],
    { stdio: ["ignore", "ignore", "ignore"], env: { ...process.env, SVC_API_KEY: key } },
  );
  let peakKb = 0;
  const sampler = setInterval(() => {
    if (child.pid) peakKb = Math.max(peakKb, procKb(child.pid, "VmHWM"), procKb(child.pid, "VmRSS"));
  }, 100);
  const [code] = (await once(child, "exit")) as [number | null];
  clearInterval(sampler);
  const seconds = (performance.now() - started) / 1000;
  rmSync(file, { force: true });
  return { lines, records_per_s: lines / seconds, peak_rss_mb: peakKb / 1024, exit_code: code };
}

export async function measureImport(url: string, createKey: string, dir: string, lines: number) {
  const small = Math.max(1, Math.floor(lines / 10));
  log(
    `import: ${small.toLocaleString("en")} lines, then ${lines.toLocaleString("en")}, through svc-vault import…`,
  );
  return [await importOnce(url, createKey, dir, small), await importOnce(url, createKey, dir, lines)];
}

export function describeImport(figures: ImportFigures[]): string {
  return [
    "import (svc-vault import, 100 per batch, 4 batches in flight; peak RSS of the CLI's process):",
    ...figures.map(
      (f) =>
        `  ${f.lines.toLocaleString("en").padStart(9)} lines: ${Math.round(f.records_per_s)} records/s, peak RSS ${f.peak_rss_mb.toFixed(0)} MB${f.exit_code === 0 ? "" : ` (exit ${f.exit_code})`}`,
    ),
  ].join("\n");
}
