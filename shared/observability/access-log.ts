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
 * The part of the line after its timestamp that stays the same for a warm function (service, cold start, function
 * arn, memory and name), as JSON.stringify would write it: built once per function, found by its arn (the same
 * string each request, so the lookup hashes nothing new) and checked against the other two names.
 */
const warmParts = new Map<string, { memory: string; name: string; part: string }>();
function invariantPart(context: Context, cold: boolean): string {
  const known = cold ? undefined : warmParts.get(context.invokedFunctionArn);
  if (known && known.memory === context.memoryLimitInMB && known.name === context.functionName)
    return known.part;
  const part = JSON.stringify({
    service: SERVICE_NAME,
    cold_start: cold,
    function_arn: context.invokedFunctionArn,
    function_memory_size: context.memoryLimitInMB,
    function_name: context.functionName,
  }).slice(1, -1);
  if (!cold)
    warmParts.set(context.invokedFunctionArn, {
      memory: context.memoryLimitInMB,
      name: context.functionName,
      part,
    });
  return part;
}

/** The ISO 8601 text of `ms` (as Date#toISOString), its second's part made once a second: a Date and its
 * formatting cost about a microsecond a line. */
let secondStart = Number.NaN;
let secondText = "";
export function isoTimestamp(ms: number): string {
  // Outside years 0000-9999 toISOString's text has another shape (and a clock never reads so).
  if (!(ms >= -62167219200000 && ms < 253402300800000)) return new Date(ms).toISOString();
  const within = ms - secondStart;
  if (!(within >= 0 && within < 1000)) {
    secondStart = ms - (((ms % 1000) + 1000) % 1000);
    secondText = new Date(secondStart).toISOString().slice(0, 20);
    return isoTimestamp(ms);
  }
  return `${secondText}${within < 10 ? "00" : within < 100 ? "0" : ""}${within}Z`;
}

/** `,"name":value` as JSON.stringify writes an object's key, or nothing for an undefined value (it leaves those out). */
const field = (name: string, value: string | number | undefined): string =>
  value === undefined ? "" : `,"${name}":${JSON.stringify(value)}`;

/**
 * Writes the request's access line: one JSON line on stdout with the base keys of the Powertools logger's lines
 * (level, message, timestamp, service, cold start, function and X-Ray trace ids), so it is queried like every
 * other line, then the entry (no `sampling_rate`: sampling never applies to it). It is the one line every request
 * writes, so it is written directly: Powertools' general path for a line (attribute stores, a JSON replacer,
 * environment reads, its own Console) cost 25–45 µs a read in the bench's profiles (docs/performance.md), and the
 * line is put together as text, the function's own keys once (the same JSON as JSON.stringify of the whole object,
 * test/unit/access-log.test.ts). Every other line goes through the logger. Locally, stdout is written once per turn
 * (log-lines.ts).
 */
export function writeAccessLine(context: Context, entry: AccessEntry): void {
  const cold = coldStart;
  coldStart = false;
  if (logLevel() > INFO) return;
  const traceId = /Root=([^;]+)/.exec(process.env._X_AMZN_TRACE_ID ?? "")?.[1];
  const line =
    `{"level":"INFO","message":"request","timestamp":"${isoTimestamp(Date.now())}",${invariantPart(context, cold)}` +
    field("function_request_id", context.awsRequestId) +
    field("xray_trace_id", traceId || undefined) +
    field("request_id", entry.request_id) +
    field("route", entry.route) +
    field("status", entry.status) +
    field("duration_ms", entry.duration_ms) +
    field("tenant_id", entry.tenant_id) +
    "}\n";
  process.stdout.write(line);
}
