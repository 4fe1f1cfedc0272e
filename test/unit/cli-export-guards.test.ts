/**
 * Stop 50's bulk review, the export's smaller findings: revealed data printed onto a terminal unasked (its
 * scrollback and any session log keep it), and a server answering a page it already answered looping the export
 * for ever, each round repeating its lines.
 */
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { runCli } from "#test/support/cli.ts";
import { runExport } from "../../scripts/cli/export.ts";

const quiet = { write: () => true, isTTY: false };
const token = (id: string) => ({ id, type: "card", data: { number: "4242424242424242" } });

afterEach(() => vi.unstubAllGlobals());

/** A server whose listing answers `pages` in turn, each with its next cursor. */
function serving(pages: { ids: string[]; next?: string }[]) {
  let call = 0;
  const fetch = vi.fn(async () => {
    const page = pages[Math.min(call++, pages.length - 1)] ?? { ids: [] };
    return new Response(
      JSON.stringify({
        data: page.ids.map(token),
        pagination: { page_size: 100, ...(page.next ? { next: page.next } : {}) },
      }),
      { status: 200, headers: { "content-type": "application/json" } },
    );
  });
  vi.stubGlobal("fetch", fetch);
  return fetch;
}

describe("export: a listing that never ends", () => {
  it("stops with an error when the server answers a page it already answered (A, B, A…)", async () => {
    const fetch = serving([
      { ids: ["t1"], next: "cursor-a" },
      { ids: ["t2"], next: "cursor-b" },
      { ids: ["t3"], next: "cursor-a" },
      { ids: ["t4"], next: "cursor-b" },
    ]);
    const out = join(mkdtempSync(join(tmpdir(), "svc-export-")), "tokens.jsonl");
    // Before: it never ended (each round writing the same lines again).
    await expect(
      runExport({ url: "http://127.0.0.1:1", key: "key_test", out, progress: quiet }),
    ).rejects.toThrow(/already answered/);
    expect(fetch).toHaveBeenCalledTimes(3);
    expect(readFileSync(out, "utf8").trim().split("\n")).toHaveLength(3);
  });

  it("follows distinct cursors to the end", async () => {
    serving([{ ids: ["t1"], next: "cursor-a" }, { ids: ["t2"], next: "cursor-b" }, { ids: ["t3"] }]);
    const out = join(mkdtempSync(join(tmpdir(), "svc-export-")), "tokens.jsonl");
    expect(await runExport({ url: "http://127.0.0.1:1", key: "key_test", out, progress: quiet })).toEqual({
      tokens: 3,
    });
  });
});

describe("export: revealed data onto a terminal", () => {
  const exportOnTerminal = (argv: string[]) => {
    serving([{ ids: ["t1"] }]);
    return runCli(["export", "--url", "http://127.0.0.1:1", ...argv], { tty: true });
  };

  it("is refused without --out (before: the cards were printed there)", async () => {
    const { code, printed } = await exportOnTerminal([]);
    expect(code).toBe(2);
    expect(printed).not.toContain("4242424242424242");
    expect(printed).toMatch(/--out -/);
  });

  it("is printed when asked with --out -", async () => {
    const { code, printed } = await exportOnTerminal(["--out", "-"]);
    expect(code).toBe(0);
    expect(printed).toContain("4242424242424242");
  });
});
