/**
 * tokenize-batch: tokens per second through POST /tokenize with 25 tokens per call against single POST /tokens,
 * both as a load scenario of the service (target ≥ 4×).
 */
import { type LoadTarget, type Measured, postLoad, type RunRecord, runScenario } from "../runs.ts";
import { cardBody } from "../settings.ts";
import { summaryFor, totalCpu, verdict } from "../summary.ts";
import type { RunningTarget } from "../targets.ts";

const PER_CALL = 25;
const TARGET_RATIO = 4;

export async function runTokenizeBatch(
  service: RunningTarget,
  createKey: string,
  records: RunRecord[],
): Promise<Measured> {
  const headers = { "svc-api-key": createKey, "content-type": "application/json" };
  const target = (label: string, path: string, body: string): LoadTarget => ({
    label,
    pid: service.pid,
    traced: service,
    load: postLoad(service.url, path, headers, body),
  });
  const batch = `[${Array.from({ length: PER_CALL }, cardBody).join(",")}]`;
  const [single, batched] = ["single", `${PER_CALL} per call`];
  await runScenario(
    "tokenize-batch",
    [target(single, "/tokens", cardBody()), target(batched, "/tokenize", batch)],
    records,
  );
  const [one, many] = [
    summaryFor(records, "tokenize-batch", single),
    summaryFor(records, "tokenize-batch", batched),
  ];
  const figures = {
    single_per_s: Math.round(one.rps),
    batched_per_s: Math.round(many.rps * PER_CALL),
    // All parties' CPU per token, single over batched: the ratio a CPU-bound machine would give (summary.ts).
    cpu_ratio: Number(((totalCpu(one) / totalCpu(many)) * PER_CALL).toFixed(1)),
  };
  const ratio = Number((figures.batched_per_s / figures.single_per_s).toFixed(1));
  return {
    figures: { ...figures, ratio },
    report:
      `tokenize-batch: single POST /tokens ${figures.single_per_s} tokens/s, POST /tokenize (${PER_CALL} per call) ` +
      `${figures.batched_per_s} tokens/s: ${ratio}× (CPU-bound ${figures.cpu_ratio}×; target ≥ ${TARGET_RATIO}×) ` +
      verdict(ratio >= TARGET_RATIO),
  };
}
