import type { Context } from "aws-lambda";
import { logLevel, SERVICE_NAME } from "#shared/logger.ts";

/** What a request's access line says beyond the invocation: identifiers and outcome, never data. */
export interface AccessEntry {
  request_id: string;
  route: string;
  status: number | undefined;
  duration_ms: number;
  tenant_id: string | undefined;
}

/** Powertools' number for INFO: the line is written when the logger's level lets INFO lines through. */
const INFO = 12;
let coldStart = true;

/**
 * Writes the request's access line: one JSON line on stdout with the base keys of the Powertools logger's lines
 * (level, message, timestamp, service, cold start, function and X-Ray trace ids), so it is queried like every
 * other line, then the entry (no `sampling_rate`: sampling never applies to it). It is the one line every request
 * writes, so it is written directly: Powertools' general path for a line (attribute stores, a JSON replacer,
 * environment reads, its own Console) cost 25–45 µs a read in the bench's profiles (docs/performance.md). Every
 * other line goes through the logger. Locally, stdout is written once per turn (log-lines.ts).
 */
export function writeAccessLine(context: Context, entry: AccessEntry): void {
  const cold = coldStart;
  coldStart = false;
  if (logLevel() > INFO) return;
  const traceId = /Root=([^;]+)/.exec(process.env._X_AMZN_TRACE_ID ?? "")?.[1];
  const line = {
    level: "INFO",
    message: "request",
    timestamp: new Date().toISOString(),
    service: SERVICE_NAME,
    cold_start: cold,
    function_arn: context.invokedFunctionArn,
    function_memory_size: context.memoryLimitInMB,
    function_name: context.functionName,
    function_request_id: context.awsRequestId,
    ...(traceId ? { xray_trace_id: traceId } : {}),
    ...entry,
  };
  process.stdout.write(`${JSON.stringify(line)}\n`);
}
