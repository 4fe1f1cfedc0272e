import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { replaceMetricTable } from "#shared/observability/metric-docs.ts";
import { METRIC, METRIC_SPEC } from "#shared/observability/metric-names.ts";

describe("metric docs", () => {
  it("docs/operations.md lists every metric as metric-names.ts says (npm run docs:env rewrites it)", () => {
    const committed = readFileSync(new URL("../../docs/operations.md", import.meta.url), "utf8");
    expect(committed).toBe(replaceMetricTable(committed));
    for (const name of Object.values(METRIC)) expect(committed).toContain(`| \`${name}\` |`);
  });

  it("gives every metric name a unit and its dimensions, and no tenant dimension", () => {
    expect(Object.keys(METRIC_SPEC).sort()).toEqual(Object.values(METRIC).sort());
    for (const spec of Object.values(METRIC_SPEC)) expect(spec.dimensions).not.toContain("tenant_id");
  });
});
