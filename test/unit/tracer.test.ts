import { describe, expect, it } from "vitest";
import { traced, tracingWanted } from "#shared/tracer.ts";

describe("tracing", () => {
  const lambda = { AWS_EXECUTION_ENV: "AWS_Lambda_nodejs22.x" };

  it("is wanted in a Lambda execution environment only", () => {
    expect(tracingWanted(lambda)).toBe(true);
    expect(tracingWanted({})).toBe(false);
    expect(tracingWanted({ AWS_EXECUTION_ENV: "" })).toBe(false);
  });

  it("is not wanted where POWERTOOLS_TRACE_ENABLED switches it off", () => {
    for (const off of ["false", "FALSE", "0", "no", "off", " false "])
      expect(tracingWanted({ ...lambda, POWERTOOLS_TRACE_ENABLED: off }), off).toBe(false);
    expect(tracingWanted({ ...lambda, POWERTOOLS_TRACE_ENABLED: "true" })).toBe(true);
  });

  it("leaves clients as they are where it does not trace (tests, local mode)", () => {
    const client = { send: () => undefined };
    expect(traced(client)).toBe(client);
    // The X-Ray SDK was never loaded: its cls-hooked context registers process.namespaces.
    expect((process as { namespaces?: unknown }).namespaces).toBeUndefined();
  });
});
