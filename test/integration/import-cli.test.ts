import { execFile } from "node:child_process";
import { createHash } from "node:crypto";
import {
  chmodSync,
  linkSync,
  mkdtempSync,
  readFileSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { useService } from "#test/support/service.ts";
import {
  appKey,
  listAllTokens,
  revealEverything,
  type TokenBody,
  tenantWithOwner,
  VISA,
} from "#test/support/tokens.ts";
import { runExport } from "../../scripts/cli/export.ts";
import { runImport } from "../../scripts/cli/import.ts";

const svc = useService();
const run = promisify(execFile);

/** Progress goes here: the tests read summaries, not bars. */
const quiet = { write: () => true, isTTY: false };

const dir = () => mkdtempSync(join(tmpdir(), "svc-import-"));
const card = (i: number) => ({
  type: "card",
  data: { number: VISA, expiration_month: 1 + (i % 12), expiration_year: 2030 },
  metadata: { n: String(i) },
});

async function setup() {
  const { api, tenant, owner } = await tenantWithOwner(svc);
  const reader = await appKey(api, tenant.managementKey, { type: "private", rules: revealEverything });
  const all = () => listAllTokens(api, reader);
  return { api, owner, reader, all };
}

/** The mapping file's rows after its header: line → [external id, token id]. */
function mapping(file: string): Map<number, [string, string]> {
  const rows = readFileSync(file, "utf8").trim().split("\n").slice(1);
  const map = new Map<number, [string, string]>();
  for (const row of rows) {
    const [line, external, id] = row.split(",");
    expect(map.has(Number(line)), `line ${line} mapped twice`).toBe(false);
    map.set(Number(line), [external ?? "", id ?? ""]);
  }
  return map;
}

describe("svc-vault import", () => {
  it("imports a JSONL file in batches: every line mapped to its token, the data stored as given", async () => {
    const { owner, all } = await setup();
    const file = join(dir(), "cards.jsonl");
    writeFileSync(
      file,
      `${Array.from({ length: 23 }, (_, i) => JSON.stringify({ ...card(i), ref: `c-${i}` })).join("\n")}\n`,
    );

    const summary = await runImport({
      file,
      url: svc.url,
      key: owner,
      batchSize: 5,
      concurrency: 3,
      idColumn: "ref",
      progress: quiet,
    });

    expect(summary).toMatchObject({ records: 23, created: 23, deduplicated: 0, failed: [] });
    const rows = mapping(summary.mapping_file);
    expect(rows.size).toBe(23);
    const stored = new Map((await all()).map((t) => [t.id, t]));
    expect(stored.size).toBe(23);
    for (const [line, [external, id]] of rows) {
      expect(external).toBe(`c-${line - 1}`);
      expect(stored.get(id)?.metadata).toEqual({ n: String(line - 1) });
      expect(stored.get(id)?.data).toMatchObject({ number: VISA, expiration_month: 1 + ((line - 1) % 12) });
    }
    expect(JSON.parse(readFileSync(summary.summary_file, "utf8"))).toMatchObject({ created: 23 });
    // Token ids and line numbers: readable by the user who ran the import only.
    for (const written of [summary.mapping_file, summary.state_file, summary.summary_file])
      expect(statSync(written).mode & 0o777).toBe(0o600);
  });

  it("imports a CSV: data.<field>, metadata.<key> and an external id column", async () => {
    const { owner, all } = await setup();
    const file = join(dir(), "people.csv");
    writeFileSync(
      file,
      [
        "customer,type,data,metadata.tier",
        "cust-1,token,alpha,gold",
        'cust-2,token,"with, a comma",silver',
        "cust-3,card_number,4242424242424242,",
      ].join("\n"),
    );
    const summary = await runImport({
      file,
      url: svc.url,
      key: owner,
      idColumn: "customer",
      progress: quiet,
    });
    expect(summary).toMatchObject({ records: 3, created: 3, failed: [] });
    const rows = mapping(summary.mapping_file);
    const byId = new Map((await all()).map((t) => [t.id, t]));
    expect(byId.get(rows.get(2)?.[1] ?? "")).toMatchObject({ data: "alpha", metadata: { tier: "gold" } });
    expect(byId.get(rows.get(3)?.[1] ?? "")).toMatchObject({ data: "with, a comma" });
    expect(byId.get(rows.get(4)?.[1] ?? "")).toMatchObject({ type: "card_number", data: VISA });
    expect(rows.get(3)?.[0]).toBe("cust-2");
  });

  it("reports a bad line by its number and problem, without its data, and imports the rest of its batch", async () => {
    const { owner, all } = await setup();
    const file = join(dir(), "mixed.jsonl");
    const lines = Array.from({ length: 8 }, (_, i) => JSON.stringify(card(i)));
    lines[2] = JSON.stringify({
      ...card(2),
      data: { number: "4242424242424241", expiration_month: 1, expiration_year: 2030 },
    });
    lines[5] = "{not json";
    writeFileSync(file, `${lines.join("\n")}\n`);

    const summary = await runImport({ file, url: svc.url, key: owner, batchSize: 4, progress: quiet });

    expect(summary.created).toBe(6);
    expect(summary.failed.map((f) => f.line)).toEqual([3, 6]);
    expect(summary.failed[0]).toMatchObject({ line: 3, status: 400 });
    expect(summary.failed[0]?.errors).toHaveProperty("data.number");
    expect(summary.failed[1]).toMatchObject({ line: 6, detail: "not valid JSON" });
    expect(readFileSync(summary.summary_file, "utf8")).not.toContain("4242424242424241");
    expect((await all()).length).toBe(6);
    expect([...mapping(summary.mapping_file).keys()].sort((a, b) => a - b)).toEqual([1, 2, 4, 5, 7, 8]);
  });

  it("reports a line that is not a token request (no `type`) as failed, never as generic tokens of its values", async () => {
    // POST /tokenize reads an object without a string `type` and a `data` as a container of requests and
    // tokenizes each value as a generic token in /general/: a misspelt `Type` moved a card number there, was
    // counted created and mapped to "undefined" (import review, 27 Nov).
    const { owner, all } = await setup();
    const jsonl = join(dir(), "typo.jsonl");
    writeFileSync(
      jsonl,
      [JSON.stringify(card(0)), JSON.stringify({ ...card(1), type: undefined, Type: "card" })].join("\n"),
    );
    const csv = join(dir(), "typo.csv");
    writeFileSync(
      csv,
      [
        "type,data.number,data.expiration_month,data.expiration_year",
        `card,${VISA},1,2030`,
        `,${VISA},2,2030`,
      ].join("\n"),
    );
    for (const [file, bad] of [
      [jsonl, 2],
      [csv, 3],
    ] as const) {
      const summary = await runImport({ file, url: svc.url, key: owner, progress: quiet });
      expect(summary.created + summary.deduplicated).toBe(1);
      expect(summary.failed.map((f) => f.line)).toEqual([bad]);
      expect(readFileSync(summary.mapping_file, "utf8")).not.toContain("undefined");
    }
    expect((await all()).filter((t) => t.type !== "card")).toEqual([]);
  });

  it("resumes after an interruption: no duplicates, every line mapped once", async () => {
    const { owner, all } = await setup();
    const file = join(dir(), "big.jsonl");
    writeFileSync(file, `${Array.from({ length: 60 }, (_, i) => JSON.stringify(card(i))).join("\n")}\n`);
    const abort = new AbortController();
    let batches = 0;
    const interrupted = runImport({
      file,
      url: svc.url,
      key: owner,
      batchSize: 5,
      concurrency: 2,
      progress: quiet,
      signal: abort.signal,
      onBatch: () => {
        if (++batches === 3) abort.abort();
      },
    });
    await expect(interrupted).rejects.toThrow();
    const before = (await all()).length;
    expect(before).toBeGreaterThanOrEqual(15);
    expect(before).toBeLessThan(60);

    const summary = await runImport({ file, url: svc.url, key: owner, batchSize: 5, progress: quiet });

    expect(summary.resumed_batches).toBeGreaterThanOrEqual(3);
    expect(summary).toMatchObject({ records: 60, failed: [] });
    expect(summary.created + summary.deduplicated).toBe(60);
    const tokens = await all();
    expect(tokens.length).toBe(60);
    const rows = mapping(summary.mapping_file);
    expect(rows.size).toBe(60);
    expect(new Set([...rows.values()].map(([, id]) => id))).toEqual(new Set(tokens.map((t) => t.id)));
  });

  it("resends a batch the service finished before the kill with the same idempotency key: the same tokens, none twice", async () => {
    const { owner, all } = await setup();
    const folder = dir();
    const file = join(folder, "crash.jsonl");
    writeFileSync(file, `${Array.from({ length: 10 }, (_, i) => JSON.stringify(card(i))).join("\n")}\n`);
    const first = await runImport({ file, url: svc.url, key: owner, batchSize: 5, progress: quiet });
    const ids = [...mapping(first.mapping_file).values()].map(([, id]) => id);
    // The kill came after the service answered but before the state recorded the batches (their sends were).
    const state = readFileSync(first.state_file, "utf8").split("\n");
    writeFileSync(first.state_file, state.filter((line) => !line.includes('"records"')).join("\n"));
    // Rerun later than the summary's 5 s of clock skew: the replayed tokens are older than this run's sends.
    await new Promise((resolve) => setTimeout(resolve, 6_000));

    const again = await runImport({ file, url: svc.url, key: owner, batchSize: 5, progress: quiet });

    expect(again.failed).toEqual([]);
    expect([...mapping(again.mapping_file).values()].map(([, id]) => id).sort()).toEqual([...ids].sort());
    expect((await all()).length).toBe(10);
    // This import created them (a replay is no deduplication: it said created 0, deduplicated 10).
    expect({ created: again.created, deduplicated: again.deduplicated }).toEqual({
      created: 10,
      deduplicated: 0,
    });
  });

  it("resumes a batch sent again without a refused line under that send's key: nothing created twice once the line would pass", async () => {
    const { api, owner, all } = await setup();
    // Someone else holds the id line 2 asks for (soon deleted).
    const holder = await api.post("/tokens", {
      key: owner,
      body: { id: "order-0002", type: "token", data: "other" },
    });
    expect(holder.status).toBe(201);
    const folder = dir();
    const file = join(folder, "orders.jsonl");
    const lines = Array.from({ length: 5 }, (_, i) => ({
      type: "token",
      data: `order value ${i + 1}`,
      ...(i === 1 ? { id: "order-0002" } : {}),
    }));
    writeFileSync(file, `${lines.map((l) => JSON.stringify(l)).join("\n")}\n`);
    const first = await runImport({ file, url: svc.url, key: owner, batchSize: 5, progress: quiet });
    expect(first.failed.map((f) => [f.line, f.status])).toEqual([[2, 409]]);
    // The run died after the service created the batch without line 2, before the state recorded it; the id was
    // freed meanwhile.
    const state = readFileSync(first.state_file, "utf8").split("\n");
    writeFileSync(first.state_file, state.filter((line) => !line.includes('"records"')).join("\n"));
    expect((await api.delete("/tokens/order-0002", { key: owner })).status).toBe(204);

    const again = await runImport({ file, url: svc.url, key: owner, batchSize: 5, progress: quiet });

    // Before: the rerun sent the batch under its first key, whose attempt stored nothing: all five created again
    // (nine tokens). Now it resumes with the resend's key (a replay), line 2 still told as refused.
    expect(again.failed.map((f) => [f.line, f.status])).toEqual([[2, 409]]);
    const values = (await all()).map((t) => t.data as string);
    expect(values.sort()).toEqual(["order value 1", "order value 3", "order value 4", "order value 5"]);
  });

  it("tells a line the key may not create as failed (403 naming it) and goes on; records batches answered after a stop", async () => {
    const { api, tenant } = await tenantWithOwner(svc);
    const rule = (priority: number, container: string) => ({
      description: container,
      priority,
      container,
      transform: "reveal",
      permissions: ["token:create", "token:read"],
    });
    const importer = await api.post<{ id: string; key: string }>("/applications", {
      key: tenant.managementKey,
      body: { name: "importer", type: "private", rules: [rule(1, "/general/")] },
    });
    expect(importer.status).toBe(201);
    const folder = dir();
    const file = join(folder, "records.jsonl");
    const records = (n: number, pii: number) =>
      Array.from({ length: n }, (_, i) => ({
        type: "token",
        data: `record ${i + 1}`,
        ...(i === pii ? { containers: ["/pii/"] } : {}),
      }));
    writeFileSync(
      file,
      `${records(10, 1)
        .map((l) => JSON.stringify(l))
        .join("\n")}\n`,
    );
    // Before: the 403 stopped the whole run ("the key lacks the permission").
    const first = await runImport({
      file,
      url: svc.url,
      key: importer.body.key,
      batchSize: 5,
      progress: quiet,
    });
    expect(first.failed.map((f) => [f.line, f.status])).toEqual([[2, 403]]);
    expect(first.created).toBe(9);

    // A stop (here a 401 for batch 0) while other batches are in flight: those the service answered are recorded,
    // so a rerun under a changed grant (idempotent replays are per grant) does not create them again.
    const other = join(folder, "more.jsonl");
    writeFileSync(
      other,
      `${records(20, -1)
        .map((l) => JSON.stringify({ ...l, data: `more ${l.data}` }))
        .join("\n")}\n`,
    );
    const realFetch = globalThis.fetch;
    let stopAnswered!: () => void;
    const stopped = new Promise<void>((resolve) => {
      stopAnswered = resolve;
    });
    globalThis.fetch = (async (url: string, init?: RequestInit) => {
      const key = (init?.headers as Record<string, string> | undefined)?.["svc-idempotency-key"];
      if (key?.endsWith("-0")) {
        // Answered once the other batches are on their way.
        await new Promise((resolve) => setTimeout(resolve, 300));
        setTimeout(stopAnswered, 0);
        return new Response(JSON.stringify({ status: 401 }), { status: 401 });
      }
      const res = await realFetch(url, init);
      // Answered once the stop has been taken (its 401 read and thrown): a busy service's order.
      if (key !== undefined) await stopped.then(() => new Promise((resolve) => setTimeout(resolve, 100)));
      return res;
    }) as typeof fetch;
    try {
      await expect(
        runImport({
          file: other,
          url: svc.url,
          key: importer.body.key,
          batchSize: 5,
          concurrency: 4,
          progress: quiet,
        }),
      ).rejects.toThrow(/401/);
    } finally {
      globalThis.fetch = realFetch;
    }
    const regrant = await api.put(`/applications/${importer.body.id}`, {
      key: tenant.managementKey,
      body: { name: "importer", rules: [rule(1, "/general/"), rule(2, "/pii/")] },
    });
    expect(regrant.status).toBe(200);
    const rerun = await runImport({
      file: other,
      url: svc.url,
      key: importer.body.key,
      batchSize: 5,
      progress: quiet,
    });
    expect(rerun.failed).toEqual([]);
    const reader = await appKey(api, tenant.managementKey, { type: "private", rules: revealEverything });
    const listed = await api.get<{ pagination: { total_items: number } }>("/tokens?size=1", { key: reader });
    // 9 from the first file and the second file's 20, each once (before: its three answered batches twice, 44).
    expect(listed.body.pagination.total_items).toBe(29);
  });

  it("counts a token once: a value another line or batch of the import created is a deduplication", async () => {
    const { owner } = await setup();
    const file = join(dir(), "same.jsonl");
    const same = { ...card(0), deduplicate_token: true };
    const batch = (p: string) => [
      same,
      ...Array.from({ length: 119 }, (_, i) => ({ type: "token", data: `${p}-${i}` })),
    ];
    // Two batches of 120 sent together (staged, overlapping): the younger waits for or retries on the older.
    writeFileSync(file, `${[...batch("a"), ...batch("b")].map((r) => JSON.stringify(r)).join("\n")}\n`);
    const summary = await runImport({
      file,
      url: svc.url,
      key: owner,
      batchSize: 120,
      concurrency: 2,
      progress: quiet,
    });

    const tokens = new Set([...mapping(summary.mapping_file).values()].map(([, id]) => id));
    expect(tokens.size).toBe(239);
    expect({ created: summary.created, deduplicated: summary.deduplicated }).toEqual({
      created: 239,
      deduplicated: 1,
    });
  });

  it("exports the tenant's tokens as the key reads them, and they import back into another tenant", async () => {
    const source = await setup();
    const folder = dir();
    const file = join(folder, "in.jsonl");
    writeFileSync(file, `${Array.from({ length: 130 }, (_, i) => JSON.stringify(card(i))).join("\n")}\n`);
    await runImport({ file, url: svc.url, key: source.owner, batchSize: 50, progress: quiet });

    const out = join(folder, "out.jsonl");
    const { tokens } = await runExport({ url: svc.url, key: source.reader, out, progress: quiet });

    expect(tokens).toBe(130);
    const exported = readFileSync(out, "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as TokenBody);
    expect(new Set(exported.map((t) => t.id)).size).toBe(130);
    expect(exported[0]?.data).toMatchObject({ number: VISA });

    // The way back in: the exported fields a token request takes.
    const target = await setup();
    const back = join(folder, "back.jsonl");
    writeFileSync(
      back,
      `${exported.map((t) => JSON.stringify({ type: t.type, data: t.data, metadata: t.metadata })).join("\n")}\n`,
    );
    const summary = await runImport({ file: back, url: svc.url, key: target.owner, progress: quiet });
    expect(summary).toMatchObject({ created: 130, failed: [] });
    const metadata = (await target.all()).map((t) => t.metadata?.n).sort();
    expect(metadata).toEqual(exported.map((t) => t.metadata?.n).sort());
  });
});

describe("svc-vault on the command line", () => {
  const cli = async (...args: string[]) => {
    try {
      const { stdout, stderr } = await run(process.execPath, ["bin/svc-vault.mjs", ...args], {
        env: { ...process.env, SVC_API_KEY: "" },
      });
      return { code: 0, stdout, stderr };
    } catch (error) {
      const failed = error as { code: number; stdout: string; stderr: string };
      return { code: failed.code, stdout: failed.stdout, stderr: failed.stderr };
    }
  };

  it("explains bad arguments, a missing file and a refused key, and never prints the key", async () => {
    const noKey = await cli("import", "x.jsonl");
    expect(noKey.code).toBe(2);
    expect(noKey.stderr).toContain("--key is required");
    expect((await cli("import", "--key", "k", "--frobnicate")).stderr).toContain("Unknown option");
    const missing = await cli("import", "/nonexistent/file.jsonl", "--key", "k", "--url", svc.url);
    expect(missing).toMatchObject({ code: 2 });
    expect(missing.stderr).toContain("no such file");

    const file = join(dir(), "one.jsonl");
    writeFileSync(file, `${JSON.stringify(card(1))}\n`);
    const badKey = "key_not_a_real_key_0123456789";
    const refused = await cli("import", file, "--key", badKey, "--url", svc.url);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain("401");
    expect(refused.stderr + refused.stdout).not.toContain(badKey);
  });

  it("imports through npx's entry point and prints the summary", async () => {
    const { owner } = await setup();
    const file = join(dir(), "two.jsonl");
    writeFileSync(file, `${JSON.stringify(card(1))}\n${JSON.stringify(card(2))}\n`);
    const done = await cli("import", file, "--key", owner, "--url", svc.url);
    expect(done.code).toBe(0);
    expect(done.stdout).toContain("2 records, 2 created, 0 deduplicated, 0 failed");
    expect(done.stderr).toContain("import: 100% 2/2");
  });

  it("never follows a redirect: neither the key nor a card goes where it points", async () => {
    const seen: string[] = [];
    const listen = (handler: Parameters<typeof createServer>[1]) =>
      new Promise<{ url: string; close: () => void }>((resolve) => {
        const server = createServer(handler).listen(0, "127.0.0.1", () =>
          resolve({
            url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
            close: () => server.close(),
          }),
        );
      });
    const elsewhere = await listen((req, res) => {
      seen.push(`${req.method} ${req.url} ${req.headers["svc-api-key"] ?? ""}`);
      res.end("{}");
    });
    const vault = await listen((req, res) => {
      req.resume();
      res.writeHead(307, { location: `${elsewhere.url}${req.url}` }).end();
    });
    const file = join(dir(), "cards.jsonl");
    writeFileSync(file, `${JSON.stringify(card(1))}\n`);
    try {
      // Before: the 307 was followed, with the key header and the body (the card) sent on.
      await expect(
        runImport({ file, url: vault.url, key: "key_pvt_secret", progress: quiet }),
      ).rejects.toThrow(/redirect/);
      expect(seen).toEqual([]);
    } finally {
      vault.close();
      elsewhere.close();
    }
  });

  it("sends idempotency keys that do not give away the file's hash (an HMAC under the import's own secret)", async () => {
    const keys: string[] = [];
    const server = createServer((req, res) => {
      keys.push(String(req.headers["svc-idempotency-key"]));
      let body = "";
      req.on("data", (chunk) => {
        body += chunk;
      });
      req.on("end", () => {
        const tokens = (JSON.parse(body) as unknown[]).map((_, i) => ({
          id: `t${i}`,
          created_at: new Date().toISOString(),
        }));
        res.writeHead(201, { "content-type": "application/json" }).end(JSON.stringify(tokens));
      });
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const file = join(dir(), "one.jsonl");
    const text = `${JSON.stringify(card(1))}\n`;
    writeFileSync(file, text);
    try {
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      await runImport({ file, url, key: "key_pvt_x", progress: quiet });
    } finally {
      server.close();
    }
    const hash = createHash("sha256").update(text).digest("hex");
    // Before: svc-import-<the file's SHA-256>: a one-card file's card could be confirmed offline from it.
    expect(keys).toHaveLength(1);
    expect(keys[0]).toMatch(/^svc-import-[0-9a-f]{40}-100-0$/);
    expect(keys[0]).not.toContain(hash.slice(0, 16));
  });

  it("makes an export written over an existing file readable by its owner only, and refuses a hard link", async () => {
    const source = await setup();
    const folder = dir();
    const file = join(folder, "in.jsonl");
    writeFileSync(file, `${JSON.stringify(card(1))}\n`);
    await runImport({ file, url: svc.url, key: source.owner, progress: quiet });
    const out = join(folder, "out.jsonl");
    writeFileSync(out, "", { mode: 0o644 });
    chmodSync(out, 0o644); // whatever the umask made of it

    await runExport({ url: svc.url, key: source.reader, out, progress: quiet });

    expect(readFileSync(out, "utf8")).toContain(VISA);
    // Before: the file kept its 0644, the card numbers in it readable by every user of the machine.
    expect(statSync(out).mode & 0o777).toBe(0o600);
    const other = join(folder, "other.txt");
    writeFileSync(other, "untouched");
    const linked = join(folder, "linked.jsonl");
    linkSync(other, linked);
    await expect(
      runExport({ url: svc.url, key: source.reader, out: linked, progress: quiet }),
    ).rejects.toThrow(/hard link/);
    expect(readFileSync(other, "utf8")).toBe("untouched");
  });

  it("says where a CSV is malformed without quoting it (a card number was printed to the terminal)", async () => {
    const { owner } = await setup();
    const file = join(dir(), "cards.csv");
    writeFileSync(file, `type,data,cid\ncard_number,${VISA},a1\ncard_number,4000056655665556"x,a2\n`);

    const failure = await runImport({ file, url: svc.url, key: owner, progress: quiet }).then(
      () => undefined,
      (error: unknown) => error as Error,
    );

    expect(failure?.message).toMatch(/line 3: not valid CSV \([A-Z_]+\)/);
    expect(failure?.message).not.toContain("4000056655665556");
  });

  it("never writes its outputs through a symbolic link planted beside the input", async () => {
    const { owner } = await setup();
    const folder = dir();
    const file = join(folder, "cards.jsonl");
    writeFileSync(file, `${JSON.stringify(card(1))}\n`);
    const victim = join(folder, "victim.txt");
    writeFileSync(victim, "untouched");
    symlinkSync(victim, `${file}.summary.json`);
    // Before: the summary was written through the link, over the victim file.
    await expect(runImport({ file, url: svc.url, key: owner, progress: quiet })).rejects.toThrow(
      /symbolic link/,
    );
    expect(readFileSync(victim, "utf8")).toBe("untouched");
  });
});
