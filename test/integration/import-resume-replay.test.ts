/**
 * Review b50 (stop 50): an import resumed after a kill replays its unrecorded batches (same idempotency key). The service's
 * replay answers 409 when a token of the batch changed since and 404 when one was deleted since: the CLI then lost
 * the whole batch's token ids (409: every line "failed", its new tokens created but in no mapping) or stopped for
 * good (404: "is --url the vault's base URL?", at every rerun for the key's 24 h, then created again).
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { hostname, tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { mappedTokenIds } from "#test/support/cli.ts";
import { useService } from "#test/support/service.ts";
import {
  appKey,
  cardNumberOf,
  listAllTokens,
  revealEverything,
  type TokenBody,
  tenantWithOwner,
  VISA,
} from "#test/support/tokens.ts";
import { runImport } from "../../scripts/cli/import.ts";

const svc = useService();
const quiet = { write: () => true, isTTY: false };
const dir = () => mkdtempSync(join(tmpdir(), "svc-import-b50-"));
/** Line i's card: a number of its own (deduplication would fold every line into one token), VISA for line 2. */
const numberOf = (i: number) => (i === 2 ? VISA : cardNumberOf(i));
const card = (i: number) => ({
  type: "card",
  data: { number: numberOf(i), expiration_month: 1 + (i % 12), expiration_year: 2030 },
  deduplicate_token: true,
});

async function setup() {
  const { api, tenant, owner } = await tenantWithOwner(svc);
  const reader = await appKey(api, tenant.managementKey, { type: "private", rules: revealEverything });
  const all = () => listAllTokens(api, reader);
  return { api, owner, all };
}

/** A first run of `lines` cards, then its batches' "done" lines cut from the state (killed before recording). */
async function importedThenKilled(lines: number) {
  const file = join(dir(), "cards.jsonl");
  writeFileSync(file, `${Array.from({ length: lines }, (_, i) => JSON.stringify(card(i))).join("\n")}\n`);
  return file;
}

describe("import resumed after a kill, a token of an unrecorded batch touched meanwhile", () => {
  it("a deduplicated card the live system updated meanwhile: the batch's new tokens still reach the mapping", async () => {
    const { api, owner, all } = await setup();
    // A card the live system tokenized earlier (and keeps using: PATCHes its metadata).
    const existing = await api.post<TokenBody>("/tokens", { key: owner, body: card(2) });
    expect(existing.status).toBe(201);
    const file = await importedThenKilled(5);
    const first = await runImport({ file, url: svc.url, key: owner, batchSize: 5, progress: quiet });
    expect(first.failed).toEqual([]);
    const ids = mappedTokenIds(first.mapping_file);
    expect(ids).toContain(existing.body.id);
    const state = readFileSync(first.state_file, "utf8").split("\n");
    writeFileSync(first.state_file, state.filter((line) => !line.includes('"records"')).join("\n"));
    const patched = await api.patch(`/tokens/${existing.body.id}`, {
      key: owner,
      headers: { "content-type": "application/merge-patch+json" },
      body: { metadata: { seen: "yes" } },
    });
    expect(patched.status).toBe(200);

    const again = await runImport({ file, url: svc.url, key: owner, batchSize: 5, progress: quiet });

    // Before: all five lines "failed" with 409 (the replay refused), the four new tokens in no mapping; importing
    // the failed lines again (as the summary invites) makes four more.
    expect(again.failed).toEqual([]);
    expect(mappedTokenIds(again.mapping_file).sort()).toEqual([...ids].sort());
    expect((await all()).length).toBe(5);
  });

  it("a token of the batch deleted meanwhile: the run neither stops for good nor blames --url", async () => {
    const { api, owner, all } = await setup();
    const file = await importedThenKilled(10);
    const first = await runImport({ file, url: svc.url, key: owner, batchSize: 5, progress: quiet });
    expect(first.failed).toEqual([]);
    const ids = mappedTokenIds(first.mapping_file);
    const state = readFileSync(first.state_file, "utf8").split("\n");
    writeFileSync(first.state_file, state.filter((line) => !line.includes('"records"')).join("\n"));
    // Line 1's token (batches finish in any order: the mapping's first row may be another line's).
    const lineOne = readFileSync(first.mapping_file, "utf8")
      .split("\n")
      .find((row) => row.startsWith("1,"))
      ?.split(",")[2];
    expect((await api.delete(`/tokens/${lineOne}`, { key: owner })).status).toBe(204);

    let stopped = "";
    const again = await runImport({ file, url: svc.url, key: owner, batchSize: 5, progress: quiet }).catch(
      (error: Error) => {
        stopped = error.message;
        return undefined;
      },
    );

    // Before: "batch …: not found (404); is --url the vault's base URL?", the same at every rerun.
    expect(stopped).not.toMatch(/is --url the vault's base URL/);
    expect(again).toBeDefined();
    // The line whose token was deleted is named, not mapped to a token that is gone.
    expect(again?.failed.map((f) => [f.line, f.status])).toEqual([[1, 404]]);
    // The nine tokens that still exist are mapped, none is created twice.
    expect(
      mappedTokenIds(again?.mapping_file ?? first.mapping_file).filter((id) => ids.includes(id)).length,
    ).toBe(9);
    expect((await all()).length).toBe(9);
  });
});

describe("a replayed POST /tokenize whose tokens were deleted or changed since", () => {
  it("answers each that stands as before and the others by a stub holding nothing of what they hold now", async () => {
    const { api, owner } = await setup();
    const body = [card(0), { type: "token", data: "first" }, { type: "token", data: "second" }];
    const send = () =>
      api.post<TokenBody[]>("/tokenize", {
        key: owner,
        body,
        headers: { "svc-idempotency-key": "replay-each" },
      });
    const first = await send();
    expect(first.status).toBe(201);
    const [kept, changed, gone] = first.body.map((t) => t.id);
    const patched = await api.patch(`/tokens/${changed}`, {
      key: owner,
      headers: { "content-type": "application/merge-patch+json" },
      body: { data: "changed since", metadata: { note: "news" } },
    });
    expect(patched.status).toBe(200);
    expect((await api.delete(`/tokens/${gone}`, { key: owner })).status).toBe(204);

    const again = await send();

    // Before: 404 for the whole answer (its last token deleted), 409 once one changed.
    expect(again.status).toBe(201);
    expect(again.headers.get("svc-idempotent-replayed")).toBe("true");
    expect(again.body[0]).toEqual(first.body[0]);
    expect(again.body[1]).toEqual({ id: changed, created_at: first.body[1]?.created_at, replay: "changed" });
    expect(again.body[2]).toEqual({ id: gone, created_at: first.body[2]?.created_at, replay: "gone" });
    expect(JSON.stringify(again.body)).not.toMatch(/changed since|news/);
    expect(kept).toBeDefined();
  });

  it("a single token's replay still fails whole: 409 once changed", async () => {
    const { api, owner } = await setup();
    const send = () =>
      api.post<TokenBody>("/tokens", {
        key: owner,
        body: { type: "token", data: "one" },
        headers: { "svc-idempotency-key": "replay-one" },
      });
    const first = await send();
    const patched = await api.patch(`/tokens/${first.body.id}`, {
      key: owner,
      headers: { "content-type": "application/merge-patch+json" },
      body: { metadata: { note: "news" } },
    });
    expect(patched.status).toBe(200);
    expect((await send()).status).toBe(409);
  });
});

describe("two imports of one file at once", () => {
  it("the second is refused while the first runs; the mapping names each line once", async () => {
    const { owner } = await setup();
    const file = join(dir(), "cards.jsonl");
    writeFileSync(file, `${Array.from({ length: 12 }, (_, i) => JSON.stringify(card(i))).join("\n")}\n`);
    const [a, b] = await Promise.allSettled([
      runImport({ file, url: svc.url, key: owner, batchSize: 3, progress: quiet }),
      runImport({ file, url: svc.url, key: owner, batchSize: 3, progress: quiet }),
    ]);
    const outcomes = [a, b].map((o) => o.status);
    // Before: both ran, and the mapping held 24 lines for 12.
    expect(outcomes.sort()).toEqual(["fulfilled", "rejected"]);
    const refused = [a, b].find((o) => o.status === "rejected") as PromiseRejectedResult;
    expect(String(refused.reason)).toMatch(/another import .* is running/);
    const mapping = readFileSync(`${file}.mapping.csv`, "utf8").trim().split("\n").slice(1);
    expect(mapping.map((row) => row.split(",")[0]).sort((x, y) => Number(x) - Number(y))).toEqual(
      Array.from({ length: 12 }, (_, i) => String(i + 1)),
    );
    // Released once done: a rerun resumes (every batch recorded).
    const again = await runImport({ file, url: svc.url, key: owner, batchSize: 3, progress: quiet });
    expect(again.resumed_batches).toBe(4);
  });

  it("a lock left by a run that died is taken over", async () => {
    const { owner } = await setup();
    const file = join(dir(), "cards.jsonl");
    writeFileSync(file, `${JSON.stringify(card(0))}\n`);
    // A process that has exited: its pid names no running process.
    const dead = spawnSync(process.execPath, ["-e", "0"]).pid;
    writeFileSync(`${file}.import-state.lock`, `${dead}\n${hostname()}\n`);
    const done = await runImport({ file, url: svc.url, key: owner, progress: quiet });
    expect(done.failed).toEqual([]);
    expect(existsSync(`${file}.import-state.lock`)).toBe(false);
  });
});

describe("the import's lock file, planted", () => {
  it("a symbolic link in its place (to an endless device) stops the run at once, naming it", async () => {
    const { owner } = await setup();
    const file = join(dir(), "cards.jsonl");
    writeFileSync(file, `${JSON.stringify(card(0))}\n`);
    symlinkSync("/dev/zero", `${file}.import-state.lock`);
    await expect(runImport({ file, url: svc.url, key: owner, progress: quiet })).rejects.toThrow(
      /is not a lock file of this CLI/,
    );
  });
});
