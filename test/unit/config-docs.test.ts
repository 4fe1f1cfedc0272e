import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { CONFIG_VARIABLES, loadConfig } from "#shared/config.ts";
import { CONFIG_DOCS, replaceConfigTable } from "#shared/config-docs.ts";

describe("configuration docs", () => {
  it("docs/operations.md lists every variable as shared/config-docs.ts says (npm run docs:env rewrites it)", () => {
    const committed = readFileSync(new URL("../../docs/operations.md", import.meta.url), "utf8");
    expect(committed).toBe(replaceConfigTable(committed));
    for (const name of CONFIG_VARIABLES) expect(committed).toContain(`| \`${name}\` |`);
  });

  it("documents exactly the variables the schema reads", () => {
    expect(Object.keys(CONFIG_DOCS).sort()).toEqual([...CONFIG_VARIABLES].sort());
    // A variable the schema does not know is ignored, so it cannot be documented as working by mistake.
    expect(() => loadConfig({ SVC_MODE: "local", SVC_NOT_A_SETTING: "1" })).not.toThrow();
  });
});
