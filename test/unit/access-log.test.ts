import type { Context } from "aws-lambda";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { logger } from "#shared/logger.ts";
import { isoTimestamp, writeAccessLine } from "#shared/observability/access-log.ts";

const context = {
  functionName: "svc-tokens",
  functionVersion: "$LATEST",
  invokedFunctionArn: "arn:aws:lambda:local:000000000000:function:svc-tokens",
  memoryLimitInMB: "512",
  awsRequestId: "invocation-1",
} as Context;
const entry = {
  request_id: "request-1",
  route: "GET /tokens/{id}",
  status: 200,
  duration_ms: 3,
  tenant_id: "tenant-1",
};

/** The JSON lines written to stdout while `run` runs (Powertools' own lines and the access line alike). */
function linesOf(run: () => void): Record<string, unknown>[] {
  const written: string[] = [];
  const write = vi.spyOn(process.stdout, "write").mockImplementation((chunk) => {
    written.push(String(chunk));
    return true;
  });
  try {
    run();
  } finally {
    write.mockRestore();
  }
  return written
    .join("")
    .trim()
    .split("\n")
    .filter(Boolean)
    .map((line) => JSON.parse(line));
}

describe("the access line", () => {
  // The suite runs SILENT (vitest.config.ts); these tests need INFO lines.
  beforeEach(() => logger.setLogLevel("INFO"));
  afterEach(() => {
    logger.setLogLevel("SILENT");
    delete process.env._X_AMZN_TRACE_ID;
  });

  it("has the base keys of the logger's lines, in their order, then the request's", () => {
    process.env._X_AMZN_TRACE_ID =
      "Root=1-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8;Sampled=1";
    logger.addContext(context);
    const [fromLogger, access] = linesOf(() => {
      logger.info("request", entry);
      writeAccessLine(context, entry);
    });
    const base = (line: Record<string, unknown> | undefined) =>
      Object.keys(line ?? {}).filter((key) => key !== "sampling_rate" && !(key in entry));
    expect(base(access)).toEqual(base(fromLogger));
    expect(access).toMatchObject({
      level: "INFO",
      message: "request",
      service: "svc-vault",
      function_name: "svc-tokens",
      function_request_id: "invocation-1",
      xray_trace_id: "1-5759e988-bd862e3fe1be46a994272793",
      ...entry,
    });
    expect(Date.parse(String(access?.timestamp))).not.toBeNaN();
  });

  it("leaves out an absent tenant and is not written above INFO", () => {
    const [line] = linesOf(() => writeAccessLine(context, { ...entry, tenant_id: undefined }));
    expect(line).not.toHaveProperty("tenant_id");
    logger.setLogLevel("WARN");
    expect(linesOf(() => writeAccessLine(context, entry))).toEqual([]);
  });

  it("is the JSON of the whole line, written as JSON.stringify writes it, whatever its values hold", () => {
    process.env._X_AMZN_TRACE_ID = "Root=1-abc;Sampled=1";
    const odd = {
      ...context,
      functionName: 'svc-"odd"\\\u2028',
      invokedFunctionArn: "arn:aws:lambda:local:0:function:svc-ü",
    } as Context;
    const entries = [
      entry,
      { ...entry, route: 'GET /a"b\\c\n', tenant_id: "t-\u0000" },
      { ...entry, status: undefined, tenant_id: undefined, duration_ms: 0 },
    ];
    for (const ctx of [context, odd])
      for (const given of entries) {
        const [text] = (() => {
          const written: string[] = [];
          const write = vi.spyOn(process.stdout, "write").mockImplementation((chunk) => {
            written.push(String(chunk));
            return true;
          });
          try {
            writeAccessLine(ctx, given);
          } finally {
            write.mockRestore();
          }
          return written;
        })();
        const parsed = JSON.parse(text ?? "");
        const expected = {
          level: "INFO",
          message: "request",
          timestamp: parsed.timestamp,
          service: "svc-vault",
          cold_start: parsed.cold_start,
          function_arn: ctx.invokedFunctionArn,
          function_memory_size: ctx.memoryLimitInMB,
          function_name: ctx.functionName,
          function_request_id: ctx.awsRequestId,
          xray_trace_id: "1-abc",
          ...given,
        };
        expect(text).toBe(`${JSON.stringify(expected)}\n`);
      }
  });
});

describe("isoTimestamp", () => {
  it("writes every millisecond as Date#toISOString does, across seconds, years and before 1970", () => {
    const starts = [
      Date.UTC(2026, 11, 31, 23, 59, 58),
      0,
      -2500,
      253402300799000,
      -62167219201000,
      Date.UTC(1999, 0, 1),
      1_700_000_000_123,
    ];
    for (const start of starts)
      for (let ms = start; ms < start + 3000; ms += 7)
        expect(isoTimestamp(ms)).toBe(new Date(ms).toISOString());
    // Back and forth (a clock set back, tests moving time): each answer is still its own.
    for (const ms of [5_000_999, 5_000_001, 4_999_999, 5_001_000])
      expect(isoTimestamp(ms)).toBe(new Date(ms).toISOString());
  });
});
