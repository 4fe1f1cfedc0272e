/**
 * tokenize-batch: tokens per second through POST /tokenize with 25 tokens per call against single POST /tokens,
 * closed loop at BENCH_CONNECTIONS, BENCH_DURATION_S each after a short warm-up (target ≥ 4×).
 */
import { cardBody, log, settings } from "./settings.ts";

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
