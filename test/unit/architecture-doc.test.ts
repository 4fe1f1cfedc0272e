/**
 * docs/architecture.md's function group table says what each Lambda may touch: it must list every group of
 * lib/function-groups.ts, no other, with the grants that file gives it.
 */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { FUNCTION_ACCESS } from "#lib/function-groups.ts";
import { FUNCTION_GROUPS, GROUP_DATA_KEYS } from "#shared/http/route.ts";

const doc = readFileSync(new URL("../../docs/architecture.md", import.meta.url), "utf8");
const section = doc.slice(
  doc.indexOf("## Function groups"),
  doc.indexOf("\n## ", doc.indexOf("## Function groups") + 3),
);
const rows = new Map(
  section
    .split("\n")
    .filter((line) => /^\| [a-z][a-z-]* +\|/.test(line))
    .map((line) =>
      line
        .split("|")
        .slice(1, -1)
        .map((cell) => cell.trim()),
    )
    .filter((cells) => cells[0] !== "group")
    .map((cells) => [cells[0] as string, cells] as const),
);

const TABLE = { nameOnly: "none", read: "read", readWrite: "read/write" } as const;
const DATA_KEY_CELL = { data: "yes", answers: "answer keys only", probe: "probe only", none: "no" } as const;

describe("docs/architecture.md function groups", () => {
  it("lists every group once, and no other", () => {
    expect([...rows.keys()].sort()).toEqual([...FUNCTION_GROUPS].sort());
  });

  it.each(FUNCTION_GROUPS.map((group) => [group]))(
    "gives %s the grants lib/function-groups.ts gives it",
    (group) => {
      const access = FUNCTION_ACCESS[group];
      const [, , table, rootKey, dataKey, also] = rows.get(group) ?? [];
      expect(table).toBe(TABLE[access.table]);
      expect(rootKey).toBe(access.rootKeyParameter ? "read" : "none");
      expect(dataKey).toBe(DATA_KEY_CELL[GROUP_DATA_KEYS[group]]);
      expect(also?.includes("e-mail")).toBe("email" in access && access.email === true);
      expect(also?.match(/sandbox runners: (\w+)/)?.[1]).toBe(
        "sandbox" in access ? access.sandbox : undefined,
      );
    },
  );
});
