import { GetCommand } from "@aws-sdk/lib-dynamodb";
import { describe, expect, it } from "vitest";
import { tokenKeys } from "#shared/adapters/dynamodb/token-keys.ts";
import { SHORT_LIVED_SEALED_SECONDS } from "#shared/domain/keys/destroy-window.ts";
import type { Client } from "#test/support/http.ts";
import { advanceTestClock, useService } from "#test/support/service.ts";
import { scanTable } from "#test/support/table-scan.ts";
import {
  appKey,
  revealEverything,
  type TokenBody,
  type TokenPage,
  tenantWithOwner,
} from "#test/support/tokens.ts";

const svc = useService();
const mergePatch = { "content-type": "application/merge-patch+json" };
const text = (data: string) => ({ type: "token", data });

async function setup() {
  const { api, tenant, owner: writer } = await tenantWithOwner(svc);
  const reader = await appKey(api, tenant.managementKey, { type: "private", rules: revealEverything });
  const open = async () => {
    const res = await api.post<{ id: string; expires_at: string; created_at: string; created_by: string }>(
      "/transactions",
      { key: writer },
    );
    expect(res.status).toBe(201);
    return res.body;
  };
  const inTxn = (id: string, extra: Record<string, string> = {}) => ({ "svc-transaction-id": id, ...extra });
  return { api, ...tenant, writer, reader, open, inTxn };
}

describe("transactions (beta)", () => {
  it("opens a transaction that expires in an hour", async () => {
    const { open, managementKey, api } = await setup();

    const txn = await open();

    expect(Date.parse(txn.expires_at) - Date.parse(txn.created_at)).toBe(3600 * 1000);
    expect(txn.created_by).toEqual(expect.any(String));
    const logs = await api.get<{ data: { operation: string }[] }>(`/logs?entity_id=${txn.id}`, {
      key: managementKey,
    });
    expect(logs.body.data.map((l) => l.operation)).toEqual(["create"]);
  });

  it("keeps creates, updates and deletes invisible until commit, then applies all of them", async () => {
    const { api, writer, reader, open, inTxn } = await setup();
    const existing = await api.post<TokenBody>("/tokens", {
      key: writer,
      body: { type: "token", data: "old" },
    });
    const doomed = await api.post<TokenBody>("/tokens", {
      key: writer,
      body: { type: "token", data: "doomed" },
    });
    const txn = await open();

    const created = await api.post<TokenBody>("/tokens", {
      key: writer,
      body: { type: "token", data: "new", id: "txn-created-1" },
      headers: inTxn(txn.id),
    });
    const patched = await api.patch(`/tokens/${existing.body.id}`, {
      key: writer,
      body: { data: "updated" },
      headers: inTxn(txn.id, mergePatch),
    });
    const deleted = await api.delete(`/tokens/${doomed.body.id}`, { key: writer, headers: inTxn(txn.id) });
    const before = await Promise.all([
      api.get(`/tokens/${created.body.id}`, { key: reader }),
      api.get<TokenBody>(`/tokens/${existing.body.id}`, { key: reader }),
      api.get(`/tokens/${doomed.body.id}`, { key: reader }),
      api.get<TokenPage>("/tokens", { key: reader }),
    ]);
    const commit = await api.post(`/transactions/${txn.id}/commit`, { key: writer });
    const after = await Promise.all([
      api.get<TokenBody>(`/tokens/${created.body.id}`, { key: reader }),
      api.get<TokenBody>(`/tokens/${existing.body.id}`, { key: reader }),
      api.get(`/tokens/${doomed.body.id}`, { key: reader }),
    ]);

    expect([created.status, patched.status, deleted.status]).toEqual([201, 200, 204]);
    expect(before[0].status).toBe(404);
    expect(before[1].body.data).toBe("old");
    expect(before[2].status).toBe(200);
    expect(before[3].body.data.map((t) => t.id)).not.toContain("txn-created-1");
    expect(commit.status).toBe(200);
    expect(commit.body).toBeUndefined();
    expect(after[0].body.data).toBe("new");
    expect(after[1].body.data).toBe("updated");
    expect(after[2].status).toBe(404);
  });

  it("rolls back every pending operation and releases the tokens it held", async () => {
    const { api, writer, reader, open, inTxn, tenantId } = await setup();
    const existing = await api.post<TokenBody>("/tokens", {
      key: writer,
      body: { type: "token", data: "keep" },
    });
    const txn = await open();
    await api.post("/tokens", {
      key: writer,
      body: { type: "token", data: "x", id: "rolled-back-1" },
      headers: inTxn(txn.id),
    });
    await api.patch(`/tokens/${existing.body.id}`, {
      key: writer,
      body: { data: "changed" },
      headers: inTxn(txn.id, mergePatch),
    });

    const rollback = await api.post(`/transactions/${txn.id}/rollback`, { key: writer });
    const gone = await api.get("/tokens/rolled-back-1", { key: reader });
    const kept = await api.get<TokenBody>(`/tokens/${existing.body.id}`, { key: reader });
    const writableAgain = await api.patch(`/tokens/${existing.body.id}`, {
      key: writer,
      body: { data: "free" },
      headers: mergePatch,
    });
    const raw = await svc.service.deps.dynamo.send(
      new GetCommand({
        TableName: svc.service.deps.config.tableName,
        Key: tokenKeys.token(tenantId, "rolled-back-1"),
      }),
    );

    expect(rollback.status).toBe(200);
    expect(gone.status).toBe(404);
    expect(kept.body.data).toBe("keep");
    expect(writableAgain.status).toBe(200);
    expect(raw.Item).toBeUndefined();
  });

  it("answers 409 when another transaction, or a plain write, touches a token an open transaction holds", async () => {
    const { api, writer, open, inTxn } = await setup();
    const token = await api.post<TokenBody>("/tokens", { key: writer, body: { type: "token", data: "v1" } });
    const a = await open();
    const b = await open();
    await api.patch(`/tokens/${token.body.id}`, {
      key: writer,
      body: { data: "a" },
      headers: inTxn(a.id, mergePatch),
    });

    const fromB = await api.patch(`/tokens/${token.body.id}`, {
      key: writer,
      body: { data: "b" },
      headers: inTxn(b.id, mergePatch),
    });
    const plain = await api.patch(`/tokens/${token.body.id}`, {
      key: writer,
      body: { data: "c" },
      headers: mergePatch,
    });
    const plainDelete = await api.delete(`/tokens/${token.body.id}`, { key: writer });
    const twiceInA = await api.delete(`/tokens/${token.body.id}`, { key: writer, headers: inTxn(a.id) });
    await api.post(`/transactions/${a.id}/commit`, { key: writer });
    const afterCommit = await api.patch(`/tokens/${token.body.id}`, {
      key: writer,
      body: { data: "d" },
      headers: mergePatch,
    });

    expect([fromB.status, plain.status, plainDelete.status, twiceInA.status]).toEqual([409, 409, 409, 409]);
    expect(afterCommit.status).toBe(200);
  });

  it("answers 404 for unknown, finished and other tenants' transactions", async () => {
    const { api, writer, open, inTxn } = await setup();
    const other = await setup();
    const txn = await open();
    await api.post(`/transactions/${txn.id}/commit`, { key: writer });

    const results = await Promise.all([
      api.post(`/transactions/${txn.id}/commit`, { key: writer }),
      api.post(`/transactions/${txn.id}/rollback`, { key: writer }),
      api.post("/transactions/00000000-0000-4000-8000-000000000000/commit", { key: writer }),
      api.post("/tokens", { key: writer, body: { type: "token", data: "x" }, headers: inTxn(txn.id) }),
      api.post(`/transactions/${(await other.open()).id}/commit`, { key: writer }),
    ]);
    const missingKey = await api.post("/transactions");

    expect(results.map((r) => r.status)).toEqual([404, 404, 404, 404, 404]);
    expect(missingKey.status).toBe(401);
  });

  it("rolls back at expires_at: the commit is refused and nothing it did remains", async () => {
    const { api, writer, reader, open, inTxn, tenantId } = await setup();
    const held = await api.post<TokenBody>("/tokens", { key: writer, body: { type: "token", data: "held" } });
    const txn = await open();
    await api.post("/tokens", {
      key: writer,
      body: { type: "token", data: "late", id: "expired-txn-1" },
      headers: inTxn(txn.id),
    });
    await api.patch(`/tokens/${held.body.id}`, {
      key: writer,
      body: { data: "never" },
      headers: inTxn(txn.id, mergePatch),
    });

    await api.post("/_test/clock", { key: svc.rootKey, body: { advance_seconds: 3601 } });
    const commit = await api.post(`/transactions/${txn.id}/commit`, { key: writer });
    const created = await api.get("/tokens/expired-txn-1", { key: reader });
    const heldNow = await api.get<TokenBody>(`/tokens/${held.body.id}`, { key: reader });
    const writable = await api.patch(`/tokens/${held.body.id}`, {
      key: writer,
      body: { data: "mine" },
      headers: mergePatch,
    });

    const raw = await svc.service.deps.dynamo.send(
      new GetCommand({
        TableName: svc.service.deps.config.tableName,
        Key: tokenKeys.token(tenantId, "expired-txn-1"),
      }),
    );

    expect(commit.status).toBe(404);
    expect(created.status).toBe(404);
    expect(raw.Item).toBeUndefined();
    expect(heldNow.body.data).toBe("held");
    expect(writable.status).toBe(200);
  });

  it("leaves a token it holds to its commit when the token expires meanwhile; the sweep looks again later", async () => {
    const { api, writer, reader, open, inTxn } = await setup();
    const probe = await api.post<TokenBody>("/tokens", {
      key: writer,
      body: { type: "token", data: "probe" },
    });
    const at = (minutes: number) =>
      new Date(Date.parse(probe.body.created_at) + minutes * 60_000).toISOString();
    const create = (data: string, expires?: string) =>
      api.post<TokenBody>("/tokens", { key: writer, body: { type: "token", data, expires_at: expires } });
    const [expiring, other] = [await create("expiring", at(30)), await create("other")];
    const txn = await open();
    const patch = (id: string, body: unknown) =>
      api.patch(`/tokens/${id}`, { key: writer, body, headers: inTxn(txn.id, mergePatch) });
    expect((await patch(expiring.body.id, { expires_at: at(24 * 60) })).status).toBe(200);
    expect((await patch(other.body.id, { data: "other-2" })).status).toBe(200);

    await advanceTestClock(svc, 31 * 60); // the old expiry passes (the sweep runs); the transaction has 29 min
    const commit = await api.post(`/transactions/${txn.id}/commit`, { key: writer });
    await advanceTestClock(svc, 30 * 60); // the deferred look, after the hold's end: the new expiry stands

    expect(commit.status).toBe(200);
    expect((await api.get(`/tokens/${expiring.body.id}`, { key: reader })).status).toBe(200);
    expect((await api.get<TokenBody>(`/tokens/${other.body.id}`, { key: reader })).body.data).toBe("other-2");
  });

  it("gives back the key count a staged update reserved when its token was deleted after the expiry", async () => {
    const { api, writer, open, inTxn, managementKey } = await setup();
    type Keys = { current: number; versions: { version: number; tokens: number | null }[] };
    const keys = async () => (await api.get<Keys>("/tenants/self/keys", { key: managementKey })).body;
    const rotate = () => api.post("/tenants/self/keys/rotate", { key: managementKey });
    const token = await api.post<TokenBody>("/tokens", { key: writer, body: { type: "token", data: "v0" } });
    const first = (await keys()).current;
    expect((await rotate()).status).toBe(200);
    const txn = await open();
    const staged = await api.patch(`/tokens/${token.body.id}`, {
      key: writer,
      body: { data: "v1" },
      headers: inTxn(txn.id, mergePatch),
    });
    expect(staged.status).toBe(200); // sealed under the new version: counted there until commit or rollback

    svc.service.deps.testClock?.advance(3601); // expired, not yet rolled back: its lock has lapsed
    expect((await api.delete(`/tokens/${token.body.id}`, { key: writer })).status).toBe(204);
    await advanceTestClock(svc, 1); // the sweep rolls it back
    expect((await rotate()).status).toBe(200);
    await advanceTestClock(svc, SHORT_LIVED_SEALED_SECONDS + 1);

    const counted = (await keys()).versions.filter((v) => v.version >= first).map((v) => v.tokens);
    expect(counted).toEqual([0, 0, 0]);
    expect((await api.delete(`/tenants/self/keys/${first + 1}`, { key: managementKey })).status).toBe(204);
  });

  it("deletes a token whose expiry, set inside it, fell due before the commit", async () => {
    const { api, writer, open, inTxn } = await setup();
    const token = await api.post<TokenBody>("/tokens", { key: writer, body: { type: "token", data: "x" } });
    const item = async () => (await scanTable(svc)).find((i) => String(i.PK).endsWith(`#${token.body.id}`));
    const txn = await open();
    const soon = new Date(Date.parse(token.body.created_at) + 120_000).toISOString();
    const headers = inTxn(txn.id, mergePatch);
    expect(
      (await api.patch(`/tokens/${token.body.id}`, { key: writer, body: { expires_at: soon }, headers }))
        .status,
    ).toBe(200);

    await advanceTestClock(svc, 300); // the staged expiry is past, the transaction still open: its entry waits
    expect((await api.post(`/transactions/${txn.id}/commit`, { key: writer })).status).toBe(200);
    expect(await item()).toBeDefined();
    await advanceTestClock(svc, 3600); // a second after the hold's end the sweep looks again

    expect(await item()).toBeUndefined(); // it used to stay at rest, counted, for the TTL backstop
  });

  it("finishes a staged rollback its request died in, giving back each reservation once", async () => {
    const { api, writer, open, inTxn, managementKey } = await setup();
    type Keys = { current: number; versions: { version: number; tokens: number | null }[] };
    const count = async () => {
      const keys = (await api.get<Keys>("/tenants/self/keys", { key: managementKey })).body;
      return keys.versions.find((v) => v.version === keys.current)?.tokens;
    };
    const before = await count();
    const txn = await open();
    const body = { type: "token", data: "pending" };
    expect((await api.post("/tokens", { key: writer, body, headers: inTxn(txn.id) })).status).toBe(201);
    // The sweep's rollback at expiry dies after closing the record, before undoing the create (the undo and its
    // reservation are one write since review round 25: there is no crash point between them).
    const store = svc.service.deps.transactions as unknown as Record<string, (...a: unknown[]) => unknown>;
    const send = store.sendIgnoringApplied as (...a: unknown[]) => Promise<void>;
    let calls = 0;
    store.sendIgnoringApplied = (...args: unknown[]) => {
      calls += 1;
      return calls === 1 ? Promise.reject(new Error("simulated crash")) : send.apply(store, args);
    };
    try {
      await api.post("/_test/clock", { key: svc.rootKey, body: { advance_seconds: 3700 } });
    } finally {
      store.sendIgnoringApplied = send;
    }
    expect(await count()).toBe((before ?? 0) + 1);
    await advanceTestClock(svc, 901); // the failed item is put off 15 min; then it is finished

    expect(await count()).toBe(before ?? 0);
  });

  it("applies a write that joins while its commit runs (the close reads its operations again)", async () => {
    const { api, writer, reader, open, inTxn, managementKey } = await setup();
    type Keys = { current: number; versions: { version: number; tokens: number | null }[] };
    const count = async () => {
      const keys = (await api.get<Keys>("/tenants/self/keys", { key: managementKey })).body;
      return keys.versions.find((v) => v.version === keys.current)?.tokens ?? 0;
    };
    const txn = await open();
    const create = (id: string) =>
      api.post("/tokens", { key: writer, body: { type: "token", id, data: id }, headers: inTxn(txn.id) });
    expect((await create("joined-early")).status).toBe(201);
    const before = await count();
    // The commit has read its operations when the caller's next write joins.
    const store = svc.service.deps.transactions as unknown as Record<
      string,
      (...a: unknown[]) => Promise<unknown>
    >;
    const operations = store.operations as (...a: unknown[]) => Promise<unknown>;
    let late = 0;
    store.operations = async (...args: unknown[]) => {
      store.operations = operations;
      const read = await operations.apply(store, args);
      late = (await create("joined-late")).status;
      return read;
    };
    const commit = await api.post(`/transactions/${txn.id}/commit`, { key: writer });
    await advanceTestClock(svc, 3700); // the expiry's sweep: nothing left behind

    expect([late, commit.status]).toEqual([201, 200]);
    expect((await api.get("/tokens/joined-late", { key: reader })).status).toBe(200); // it was a 404, lost
    expect(await count()).toBe(before + 1); // counted once, as a live token (it used to be lost, yet counted)
  });

  it("never deletes (and counts off) a create still pending in a lapsed transaction: its rollback does", async () => {
    const { api, writer, reader, open, inTxn, managementKey } = await setup();
    type Keys = { current: number; versions: { version: number; tokens: number | null }[] };
    const count = async () => {
      const keys = (await api.get<Keys>("/tenants/self/keys", { key: managementKey })).body;
      return keys.versions.find((v) => v.version === keys.current)?.tokens;
    };
    const live = await api.post<TokenBody>("/tokens", {
      key: writer,
      body: { type: "token", data: "keep me" },
    });
    const txn = await open();
    const soon = new Date(Date.parse(txn.created_at) + 10 * 60_000).toISOString();
    const body = { type: "token", data: "pending", expires_at: soon };
    expect((await api.post("/tokens", { key: writer, body, headers: inTxn(txn.id) })).status).toBe(201);

    await advanceTestClock(svc, 3700); // one sweep run after the token's and the transaction's expiry

    expect(await count()).toBe(1); // the live token (it read 0: counted off twice, its key destroyable)
    expect((await api.get(`/tokens/${live.body.id}`, { key: reader })).status).toBe(200);
  });

  it("records a staged rollback's end once, with its audit entry, even when it dies right after undoing", async () => {
    const { api, writer, open, inTxn, managementKey } = await setup();
    const txn = await open();
    expect(
      (await api.post("/tokens", { key: writer, body: text("pending"), headers: inTxn(txn.id) })).status,
    ).toBe(201);
    const store = svc.service.deps.transactions as unknown as Record<
      string,
      (...a: unknown[]) => Promise<unknown>
    >;
    const undoEach = store.undoEach as (...a: unknown[]) => Promise<unknown>;
    store.undoEach = async (...args: unknown[]) => {
      store.undoEach = undoEach;
      await undoEach.apply(store, args);
      throw new Error("simulated crash");
    };
    await api.post("/_test/clock", { key: svc.rootKey, body: { advance_seconds: 3700 } });
    await advanceTestClock(svc, 901); // the failed item is put off 15 min

    const logs = await api.get<{ data: { operation: string }[] }>(`/logs?entity_id=${txn.id}`, {
      key: managementKey,
    });
    expect(logs.body.data.map((l) => l.operation).sort()).toEqual(["create", "update"]);
  });

  it("finishes a commit whose locks lapsed when a write meets one, its counts right", async () => {
    const { api, writer, reader, open, inTxn, managementKey } = await setup();
    type Keys = { current: number; versions: { version: number; tokens: number | null }[] };
    const keys = async () => (await api.get<Keys>("/tenants/self/keys", { key: managementKey })).body;
    const create = async (data: string) =>
      (await api.post<TokenBody>("/tokens", { key: writer, body: text(data) })).body.id;
    const first = (await keys()).current;
    const [x, y] = [await create("x"), await create("y")]; // y: same key version, never in the transaction
    // Tokens of nine periods (nine key sets): 90 deletes and their counters do not fit one commit write.
    const held = [x];
    for (let period = 0; period < 9; period++) {
      while (held.length < (period + 1) * 10) held.push(await create(`t-${period}-${held.length}`));
      svc.service.deps.testClock?.advance(30 * 86_400);
    }
    const txn = await open();
    for (const id of held)
      expect((await api.delete(`/tokens/${id}`, { key: writer, headers: inTxn(txn.id) })).status).toBe(204);
    // Past its commit point the request dies before applying anything.
    const store = svc.service.deps.transactions as unknown as Record<string, unknown>;
    const rollForward = store.rollForward;
    store.rollForward = () => Promise.reject(new Error("simulated crash"));
    await api.post(`/transactions/${txn.id}/commit`, { key: writer }).finally(() => {
      store.rollForward = rollForward;
    });
    svc.service.deps.testClock?.advance(3601); // the locks lapse before the sweep comes
    // The PATCH applies the committed deletions first (it used to replace x's old version, the committed change
    // then skipped as written since): x is gone.
    const patched = await api.patch(`/tokens/${x}`, {
      key: writer,
      body: { data: "x2" },
      headers: mergePatch,
    });
    expect(patched.status).toBe(404);
    await advanceTestClock(svc, 1); // the sweep finds the commit finished

    expect((await keys()).versions.find((v) => v.version === first)?.tokens).toBe(1); // y (it read 0)
    expect((await api.delete(`/tenants/self/keys/${first}`, { key: managementKey })).status).toBe(409);
    expect((await api.get(`/tokens/${x}`, { key: reader })).status).toBe(404);
    expect((await api.get(`/tokens/${y}`, { key: reader })).status).toBe(200);
  }, 120_000);

  it("holds for deletion only the version it read: a reseal meanwhile is a 409, never a count off the wrong keys", async () => {
    const { api, writer, reader, open, inTxn, managementKey } = await setup();
    type Keys = { current: number; versions: { version: number; tokens: number | null }[] };
    const keys = async () => (await api.get<Keys>("/tenants/self/keys", { key: managementKey })).body;
    const [x, y] = [
      (await api.post<TokenBody>("/tokens", { key: writer, body: text("x") })).body,
      (await api.post<TokenBody>("/tokens", { key: writer, body: text("y") })).body,
    ];
    const first = (await keys()).current;
    expect((await api.post("/tenants/self/keys/rotate", { key: managementKey })).status).toBe(200);
    const txn = await open();
    // Between the DELETE's read of x and its hold, x is written again (re-sealed under the new version).
    const tokens = svc.service.deps.tokens;
    const remove = tokens.delete.bind(tokens);
    tokens.delete = async (token, audit, options) => {
      tokens.delete = remove;
      await api.patch(`/tokens/${x.id}`, { key: writer, body: { data: "x2" }, headers: mergePatch });
      return remove(token, audit, options);
    };
    const deleted = await api.delete(`/tokens/${x.id}`, { key: writer, headers: inTxn(txn.id) });
    tokens.delete = remove;
    expect(deleted.status).toBe(409); // it was a 204, and the commit counted `first` off for x
    expect((await api.post(`/transactions/${txn.id}/commit`, { key: writer })).status).toBe(200);

    expect((await keys()).versions.find((v) => v.version === first)?.tokens).toBe(1); // y
    expect((await api.get(`/tokens/${y.id}`, { key: reader })).status).toBe(200);
  });

  /** `total` tokens spread over `periods` 30-day periods (as many key sets), the clock moved past them. */
  const tokensOfPeriods = async (api: Client, writer: string, periods: number, total: number) => {
    const ids: string[] = [];
    for (let period = 0; period < periods; period++) {
      while (ids.length < Math.round(((period + 1) * total) / periods))
        ids.push(
          (await api.post<TokenBody>("/tokens", { key: writer, body: text(`p${period}-${ids.length}`) })).body
            .id,
        );
      svc.service.deps.testClock?.advance(30 * 86_400);
    }
    return ids;
  };

  it("commits 90 deletes over eleven key sets in writes that fit (it failed past its commit point, and the sweep with it)", async () => {
    const { api, writer, open, inTxn } = await setup();
    const held = await tokensOfPeriods(api, writer, 11, 90); // a tenant a year old has these key sets
    const txn = await open();
    for (const id of held)
      expect((await api.delete(`/tokens/${id}`, { key: writer, headers: inTxn(txn.id) })).status).toBe(204);

    const commit = await api.post(`/transactions/${txn.id}/commit`, { key: writer });
    const swept = await api.post("/_test/clock", { key: svc.rootKey, body: { advance_seconds: 3601 } });

    expect([commit.status, swept.status]).toEqual([200, 200]);
    expect((await api.get(`/tokens/${held[0]}`, { key: writer })).status).toBe(404);
  }, 240_000);

  it("commits staged versions past DynamoDB's 4 MB a write, counted in UTF-8 bytes (60 PATCHes of 60 KB)", async () => {
    const { api, writer, reader, open, inTxn } = await setup();
    // Some with CJK metadata and mask (3 bytes a character): counted in characters, the write passed 4 MB.
    const cjk = (n: number) => "語".repeat(n);
    const metadata = Object.fromEntries(Array.from({ length: 20 }, (_, i) => [`${cjk(98)}${i}`, cjk(500)]));
    const wide = { metadata, mask: { a: cjk(3600), b: cjk(3600), c: cjk(3600) } };
    const ids: string[] = [];
    for (let i = 0; i < 60; i++) {
      const body = { ...text(`${i}`), ...(i < 23 ? wide : {}) };
      ids.push((await api.post<TokenBody>("/tokens", { key: writer, body })).body.id);
    }
    const txn = await open();
    for (const id of ids) {
      const body = { data: "z".repeat(60_000) };
      expect(
        (await api.patch(`/tokens/${id}`, { key: writer, body, headers: inTxn(txn.id, mergePatch) })).status,
      ).toBe(200);
    }
    expect((await api.post(`/transactions/${txn.id}/commit`, { key: writer })).status).toBe(200); // a 500 each time
    expect((await api.get<TokenBody>(`/tokens/${ids[59]}`, { key: reader })).body.data).toHaveLength(60_000);
  }, 240_000);

  it("gives back the reservation of a staged update the sweep's finish skips (its token written since)", async () => {
    const { api, writer, open, inTxn, managementKey } = await setup();
    type Keys = { current: number; versions: { version: number; tokens: number | null }[] };
    const keys = async () => (await api.get<Keys>("/tenants/self/keys", { key: managementKey })).body;
    const held = await tokensOfPeriods(api, writer, 9, 90); // 90 updates and their counters: a staged commit
    const txn = await open();
    for (const id of held) {
      const body = { data: `${id}!` };
      expect(
        (await api.patch(`/tokens/${id}`, { key: writer, body, headers: inTxn(txn.id, mergePatch) })).status,
      ).toBe(200);
    }
    const current = (await keys()).current;
    const store = svc.service.deps.transactions as unknown as Record<string, unknown>;
    const rollForward = store.rollForward;
    store.rollForward = () => Promise.reject(new Error("simulated crash")); // past the commit point
    await api.post(`/transactions/${txn.id}/commit`, { key: writer }).finally(() => {
      store.rollForward = rollForward;
    });
    svc.service.deps.testClock?.advance(3601); // the locks lapse; another write of the first goes through
    const body = { data: "x2" };
    expect((await api.patch(`/tokens/${held[0]}`, { key: writer, body, headers: mergePatch })).status).toBe(
      200,
    );
    await advanceTestClock(svc, 1); // the sweep finishes the commit, skipping that one

    expect((await keys()).versions.find((v) => v.version === current)?.tokens).toBe(90); // it read 91 for good
  }, 240_000);
});
