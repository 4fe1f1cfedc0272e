/**
 * Attacks on POST /v2/tokens/search: finding another tenant's tokens, tokens the caller's rules hide, tokens
 * gone or re-indexed away, searching without token:search, and reading searched values back from the log.
 */
import { UpdateCommand } from "@aws-sdk/lib-dynamodb";
import { describe, expect, it } from "vitest";
import { bodyText } from "#test/support/http.ts";
import { useService } from "#test/support/service.ts";
import { scanTable } from "#test/support/table-scan.ts";
import { appKey, revealEverything, type TokenBody, tenantWithOwner } from "#test/support/tokens.ts";

const svc = useService();

interface CursorPage {
  pagination: { page_size: number; next?: string };
  data: TokenBody[];
}

const ssn = (value: string, containers = ["/pii/"], metadata?: Record<string, string>) => ({
  type: "token",
  data: { ssn: value },
  containers,
  search_indexes: ["{{ data.ssn }}", "{{ data.ssn | slice: -4, 4 }}"],
  ...(metadata ? { metadata } : {}),
});

async function tenant() {
  const { api, tenant, owner } = await tenantWithOwner(svc);
  const searcher = await appKey(api, tenant.managementKey, { type: "private", rules: revealEverything });
  const search = (query: string, key = searcher, extra: Record<string, unknown> = {}) =>
    api.post<CursorPage>("/v2/tokens/search", { key, body: { query, ...extra } });
  const create = async (body: unknown) => {
    const res = await api.post<TokenBody>("/tokens", { key: owner, body });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    return res.body;
  };
  /** A private application's key with these rules. */
  const keyWith = (rules: unknown[]) => appKey(api, tenant.managementKey, { type: "private", rules });
  return { api, ...tenant, owner, searcher, search, create, keyWith };
}

const ids = (page: { body: CursorPage }) => page.body.data.map((t) => t.id).sort();

describe("POST /v2/tokens/search", () => {
  it("answers each term, and a term ANDed with container:", async () => {
    const t = await tenant();
    const a = await t.create(ssn("111-22-3333", ["/pii/us/"], { customer: "c-1" }));
    const b = await t.create(ssn("444-55-3333", ["/pii/eu/"], { customer: "c-2" }));
    const card = await t.create({
      type: "card",
      data: { number: "4242424242424242", expiration_month: 1, expiration_year: 2031 },
    });

    expect(ids(await t.search("data:111-22-3333"))).toEqual([a.id]);
    expect(ids(await t.search("data:3333"))).toEqual([a.id, b.id].sort());
    expect(ids(await t.search("data:3333 AND container:/pii/eu/"))).toEqual([b.id]);
    expect(ids(await t.search("container:/pii/us/ AND data:3333"))).toEqual([a.id]);
    expect(ids(await t.search("data:999-99-9999"))).toEqual([]);
    expect(ids(await t.search("type:card"))).toEqual([card.id]);
    const revealed = await t.api.get<TokenBody>(`/tokens/${card.id}`, { key: t.searcher });
    expect(ids(await t.search(`fingerprint:${revealed.body.fingerprint}`))).toEqual([card.id]);
    expect(ids(await t.search("metadata.customer:c-2"))).toEqual([b.id]);
    expect(ids(await t.search("container:/pii/"))).toEqual([a.id, b.id].sort());
    expect(ids(await t.search('metadata.customer:"c-1" AND container:/pii/'))).toEqual([a.id]);
    // Answered as reads are: data revealed to this key.
    const found = await t.search("data:111-22-3333");
    expect(found.body.data[0]?.data).toEqual({ ssn: "111-22-3333" });

    // Pages by cursor; a cursor is bound to its query.
    const first = await t.search("data:3333", t.searcher, { size: 1 });
    expect(first.body.data).toHaveLength(1);
    expect(first.body.pagination.next).toBeDefined();
    const second = await t.search("data:3333", t.searcher, { size: 1, start: first.body.pagination.next });
    expect([...ids(first), ...ids(second)].sort()).toEqual([a.id, b.id].sort());
    const other = await t.search("data:111-22-3333", t.searcher, { start: first.body.pagination.next });
    expect(other.status).toBe(400);
  });

  it("refuses anything but one term and an optional container: with a clear 400", async () => {
    const t = await tenant();
    for (const query of [
      "ssn:1",
      "data:1 AND type:card",
      "container:/a/ AND container:/b/",
      "data:1 OR data:2",
      "data:",
      "metadata.__proto__:x",
      "data:1 AND container:/a/ AND container:/a/",
    ]) {
      const res = await t.search(query);
      expect(res.status, query).toBe(400);
      expect(bodyText(res.body)).toContain("search query is invalid");
    }
  });

  it("needs token:search, which a public application cannot hold", async () => {
    const t = await tenant();
    await t.create(ssn("111-22-3333"));
    const reader = await appKey(t.api, t.managementKey, { type: "private", permissions: ["token:read"] });
    const refused = await t.search("data:111-22-3333", reader);
    expect(refused.status).toBe(403);
    expect(bodyText(refused.body)).not.toContain("111-22-3333");
    const publicApp = await t.api.post("/applications", {
      key: t.managementKey,
      body: { name: "pub", type: "public", permissions: ["token:create", "token:search"] },
    });
    expect(publicApp.status).toBe(400);
  });

  it("never finds another tenant's token, even for the same value", async () => {
    const a = await tenant();
    const b = await tenant();
    const victim = await a.create(ssn("111-22-3333"));
    const revealed = await a.api.get<TokenBody>(`/tokens/${victim.id}`, { key: a.searcher });
    expect(revealed.body.fingerprint).toBeDefined();
    expect(ids(await b.search("data:111-22-3333"))).toEqual([]);
    expect(ids(await b.search(`fingerprint:${revealed.body.fingerprint}`))).toEqual([]);
    expect(ids(await a.search("data:111-22-3333"))).toEqual([victim.id]);
  });

  it("shows only what the caller's read rules allow, and counts nothing it hides", async () => {
    const t = await tenant();
    const visible = await t.create(ssn("111-22-3333", ["/pii/us/"]));
    await t.create(ssn("444-55-3333", ["/pii/eu/"]));
    const usOnly = await appKey(t.api, t.managementKey, {
      type: "private",
      rules: [
        {
          description: "us",
          priority: 1,
          container: "/pii/us/",
          transform: "mask",
          permissions: ["token:read", "token:search"],
        },
      ],
    });
    const page = await t.search("data:3333", usOnly);
    expect(page.status).toBe(200);
    expect(ids(page)).toEqual([visible.id]);
    expect(bodyText(page.body)).not.toContain("444-55");
    expect(ids(await t.search("data:444-55-3333", usOnly))).toEqual([]);
  });

  it("never says, by a next page, that matches the caller may not see exist", async () => {
    const t = await tenant();
    // More hidden matches than the pages one request reads (10): before, size=1 then answered a `next`.
    for (let i = 10; i < 22; i++) await t.create(ssn(`9${i}-00-7777`, ["/pii/hidden/"]));
    const general = await t.keyWith([
      {
        priority: 1,
        container: "/general/",
        transform: "reveal",
        permissions: ["token:read", "token:search"],
      },
    ]);

    // Each page size: nothing to show, and no `next` hinting at hidden matches (a wrong guess looks the same).
    for (const size of [1, 2]) {
      const page = await t.search("data:7777", general, { size });
      expect(page.status).toBe(200);
      expect(page.body).toEqual({ pagination: { page_size: size }, data: [] });
    }
    const wrong = await t.search("data:0000", general, { size: 1 });
    expect(wrong.body).toEqual({ pagination: { page_size: 1 }, data: [] });
  });

  it("answers the caller's own match whatever the number of hidden tokens sharing its value", async () => {
    // Hidden matches used up the pages one request reads (10 store pages of `size`): a caller planting its own
    // match under an id that sorts last saw it vanish at 10 × size hidden matches, and counted them by varying
    // `size` (import review, 27 Nov). The store now passes over what the caller may not see.
    const t = await tenant();
    for (let i = 0; i < 12; i++) await t.create(ssn("123-45-6789", ["/pii/hidden/"]));
    const planter = await t.keyWith([
      {
        priority: 1,
        container: "/general/",
        transform: "reveal",
        permissions: ["token:create", "token:read", "token:search"],
      },
    ]);
    const plant = async (value: string) => {
      const body = { ...ssn(value, ["/general/"]), id: `zzzz-${value}` };
      expect((await t.api.post("/tokens", { key: planter, body })).status).toBe(201);
    };
    await plant("123-45-6789"); // shared by 12 hidden tokens
    await plant("987-65-4321"); // by none
    for (const size of [1, 2]) {
      expect(ids(await t.search("data:987-65-4321", planter, { size }))).toEqual(["zzzz-987-65-4321"]);
      expect(ids(await t.search("data:123-45-6789", planter, { size }))).toEqual(["zzzz-123-45-6789"]);
    }
  });

  it("passes over hidden matches whose lookup items name no container too (written before containers, or by a move)", async () => {
    // Round 28: lookup items written before they carried the container (every item of an upgraded deployment)
    // kept the counting oracle; and a move staged in a transaction then rolled back left the items naming the
    // container the token never reached, so a caller who reads its real one never found it again.
    const t = await tenant();
    for (let i = 0; i < 12; i++) await t.create(ssn("222-33-4444", ["/pii/hidden/"]));
    const { dynamo, config } = svc.service.deps;
    for (const item of await scanTable(svc))
      if (item.entity === "search_entry")
        await dynamo.send(
          new UpdateCommand({
            TableName: config.tableName,
            Key: { PK: item.PK, SK: item.SK },
            UpdateExpression: "REMOVE container",
          }),
        );
    const general = await t.keyWith([
      {
        priority: 1,
        container: "/general/",
        transform: "reveal",
        permissions: ["token:create", "token:read", "token:search"],
      },
    ]);
    const body = { ...ssn("222-33-4444", ["/general/"]), id: "zzzz-planted" };
    expect((await t.api.post("/tokens", { key: general, body })).status).toBe(201);
    expect(ids(await t.search("data:222-33-4444", general, { size: 1 }))).toEqual(["zzzz-planted"]);

    const txn = await t.api.post<{ id: string }>("/transactions", { key: t.searcher });
    const moved = await t.api.patch(`/tokens/zzzz-planted`, {
      key: t.searcher,
      body: { containers: ["/pii/hidden/"] },
      headers: { "content-type": "application/merge-patch+json", "svc-transaction-id": txn.body.id },
    });
    expect(moved.status).toBe(200);
    expect(
      (await t.api.post(`/transactions/${txn.body.id}/rollback`, { key: t.searcher })).status,
    ).toBeLessThan(300);
    expect(ids(await t.search("data:222-33-4444", general, { size: 1 }))).toEqual(["zzzz-planted"]);

    // Round 29: a committed move's items named no container for good (every search read the token items).
    const commit = await t.api.post<{ id: string }>("/transactions", { key: t.searcher });
    const headers = { "content-type": "application/merge-patch+json", "svc-transaction-id": commit.body.id };
    const move = { containers: ["/pii/hidden/"] };
    expect((await t.api.patch("/tokens/zzzz-planted", { key: t.searcher, body: move, headers })).status).toBe(
      200,
    );
    expect((await t.api.post(`/transactions/${commit.body.id}/commit`, { key: t.searcher })).status).toBe(
      200,
    );
    const items = (await scanTable(svc)).filter(
      (i) => i.entity === "search_entry" && i.token_id === "zzzz-planted",
    );
    expect(items.map((i) => i.container)).toEqual(items.map(() => "/pii/hidden/"));
    expect(ids(await t.search("data:222-33-4444", general, { size: 1 }))).toEqual([]);

    // Round 30: that rewrite is best effort: its failure (throttling here) fails no commit already made.
    dynamo.middlewareStack.add(
      (next, context) => (args) => {
        const sent = (args.input as { TransactItems?: Record<string, unknown>[] }).TransactItems ?? [];
        const settling = sent[0]?.ConditionCheck && sent.length > 1 && sent.every((i, k) => k === 0 || i.Put);
        if (context.commandName === "TransactWriteItemsCommand" && settling)
          throw Object.assign(new Error("throttled"), { name: "ThrottlingException" });
        return next(args);
      },
      { step: "initialize", name: "throttleSettling" },
    );
    try {
      const back = await t.api.post<{ id: string }>("/transactions", { key: t.searcher });
      const again = { "content-type": "application/merge-patch+json", "svc-transaction-id": back.body.id };
      const home = { containers: ["/general/"] };
      const patched = await t.api.patch("/tokens/zzzz-planted", {
        key: t.searcher,
        body: home,
        headers: again,
      });
      expect(patched.status).toBe(200);
      expect((await t.api.post(`/transactions/${back.body.id}/commit`, { key: t.searcher })).status).toBe(
        200,
      );
    } finally {
      dynamo.middlewareStack.remove("throttleSettling");
    }
    expect(ids(await t.search("data:222-33-4444", general, { size: 1 }))).toEqual(["zzzz-planted"]);
  });

  it("finds only where a rule grants token:search, not only token:read", async () => {
    const t = await tenant();
    const general = await t.create(ssn("123-45-8888", ["/general/"]));
    await t.create(ssn("987-65-8888", ["/pci/high/"]));
    const searchOnGeneral = await t.keyWith([
      { priority: 1, container: "/general/", transform: "reveal", permissions: ["token:search"] },
      { priority: 2, container: "/", transform: "mask", permissions: ["token:read"] },
    ]);

    expect(ids(await t.search("data:8888", searchOnGeneral))).toEqual([general.id]);
    expect(ids(await t.search("data:987-65-8888", searchOnGeneral))).toEqual([]);
    expect(ids(await t.search("type:token", searchOnGeneral))).toEqual([general.id]);
  });

  it("follows PATCH re-indexing, and never finds a deleted token", async () => {
    const t = await tenant();
    const token = await t.create(ssn("111-22-3333"));
    const patched = await t.api.call("PATCH", `/tokens/${token.id}`, {
      key: t.owner,
      body: { data: { ssn: "999-88-7777" } },
      headers: { "content-type": "application/merge-patch+json" },
    });
    expect(patched.status, JSON.stringify(patched.body)).toBe(200);
    expect(ids(await t.search("data:111-22-3333"))).toEqual([]);
    expect(ids(await t.search("data:3333"))).toEqual([]);
    expect(ids(await t.search("data:999-88-7777"))).toEqual([token.id]);

    const dropped = await t.api.call("PATCH", `/tokens/${token.id}`, {
      key: t.searcher,
      body: { search_indexes: null },
      headers: { "content-type": "application/merge-patch+json" },
    });
    expect(dropped.status, JSON.stringify(dropped.body)).toBe(200);
    expect(ids(await t.search("data:999-88-7777"))).toEqual([]);

    const gone = await t.create(ssn("222-33-4444"));
    expect((await t.api.delete(`/tokens/${gone.id}`, { key: t.owner })).status).toBe(204);
    expect(ids(await t.search("data:222-33-4444"))).toEqual([]);
  });

  it("logs the query by its HMAC and each token read, never the searched value", async () => {
    const t = await tenant();
    const token = await t.create(ssn("111-22-3333"));
    expect(ids(await t.search("data:111-22-3333"))).toEqual([token.id]);
    const logs = await t.api.get<{ data: { entity_id: string; operation: string; message: string }[] }>(
      "/logs",
      { key: t.managementKey },
    );
    expect(logs.status).toBe(200);
    const text = bodyText(logs.body);
    expect(text).not.toContain("111-22-3333");
    expect(text).not.toContain("3333");
    expect(
      logs.body.data.some((l) => l.entity_id.startsWith("search:") && /query HMAC/.test(l.message)),
    ).toBe(true);
    expect(
      logs.body.data.some((l) => l.entity_id === token.id && l.message === "Token read in a search"),
    ).toBe(true);
  });
});

describe("attack: a search's next page as an oracle of hidden matches", () => {
  it("answers the same page (no next) whether a hidden token shares the planted value or not", async () => {
    const { api, tenant, owner } = await tenantWithOwner(svc);
    const victim = await api.post<TokenBody>("/tokens", {
      key: owner,
      body: { type: "employer_id_number", data: "12-3456789", search_indexes: ["{{ data }}"] },
    });
    expect(victim.status).toBe(201);
    expect(victim.body.containers).toEqual(["/pii/high/"]);
    const general = await appKey(api, tenant.managementKey, {
      type: "private",
      rules: [
        {
          description: "general",
          priority: 1,
          container: "/general/",
          transform: "reveal",
          permissions: ["token:create", "token:read", "token:search"],
        },
      ],
    });
    const search = (query: string, start?: string) =>
      api.post<CursorPage>("/v2/tokens/search", {
        key: general,
        body: { query, size: 1, ...(start ? { start } : {}) },
      });
    const plant = async (value: string, id: string) => {
      const res = await api.post("/tokens", {
        key: general,
        body: {
          type: "employer_id_number",
          id,
          data: value,
          containers: ["/general/"],
          search_indexes: ["{{ data }}"],
        },
      });
      expect(res.status, JSON.stringify(res.body)).toBe(201);
    };
    await plant("12-3456789", "000-right"); // the hidden token's value
    await plant("98-7654321", "000-wrong"); // nobody else's

    const right = await search("data:12-3456789");
    const wrong = await search("data:98-7654321");
    expect(right.status).toBe(200);
    expect(right.body.data.map((t) => t.id)).toEqual(["000-right"]);
    expect(wrong.body.data.map((t) => t.id)).toEqual(["000-wrong"]);
    // The caller's own match is all it may see, in both cases: the pages must look alike.
    expect(right.body.pagination.next === undefined).toBe(wrong.body.pagination.next === undefined);
    expect(right.body.pagination.next).toBeUndefined();

    // Still paged where the caller sees more than one match.
    await plant("12-3456789", "zzz-right");
    const first = await search("data:12-3456789");
    expect(first.body.data.map((t) => t.id)).toEqual(["000-right"]);
    expect(first.body.pagination.next).toBeDefined();
    const second = await search("data:12-3456789", first.body.pagination.next);
    expect(second.body.data.map((t) => t.id)).toEqual(["zzz-right"]);
    expect(second.body.pagination.next).toBeUndefined();
    // And a page size larger than what the caller sees answers all, without next.
    const all = await api.post<CursorPage>("/v2/tokens/search", {
      key: general,
      body: { query: "data:12-3456789", size: 5 },
    });
    expect(all.body.data.map((t) => t.id).sort()).toEqual(["000-right", "zzz-right"]);
    expect(all.body.pagination.next).toBeUndefined();
  });

  it("two PATCHes of one token back to its earlier value: the token stays searchable by the value it holds", async () => {
    const t = await tenant();
    const token = await t.create(ssn("111-22-3333"));
    const mergePatch = { "content-type": "application/merge-patch+json" };
    const patch = (value: string) =>
      t.api.patch<TokenBody>(`/tokens/${token.id}`, {
        key: t.owner,
        headers: mergePatch,
        body: { data: { ssn: value } },
      });
    // PATCH 1 (111 → 999) has committed its write and is about to drop the lookup items of the hashes the token no
    // longer has (best effort, after the write): meanwhile PATCH 2 puts the token back to 111, writing those items.
    const store = svc.service.deps.tokens as unknown as {
      dropSearchEntries: (next: unknown, previous: string[] | undefined, owner?: unknown) => Promise<void>;
    };
    const original = store.dropSearchEntries.bind(store);
    let raced = false;
    store.dropSearchEntries = async (...args) => {
      if (!raced) {
        raced = true;
        const back = await patch("111-22-3333");
        expect(back.status, JSON.stringify(back.body)).toBe(200);
      }
      return original(...args);
    };
    try {
      expect((await patch("999-88-7777")).status).toBe(200);
    } finally {
      store.dropSearchEntries = original;
    }
    expect(raced).toBe(true);
    const read = await t.api.get<TokenBody>(`/tokens/${token.id}`, { key: t.searcher });
    expect(read.body.data).toEqual({ ssn: "111-22-3333" });
    // The token holds 111-22-3333, its lookup item was deleted by PATCH 1's late drop: no search finds it.
    expect(ids(await t.search("data:111-22-3333"))).toEqual([token.id]);
    expect(ids(await t.search("data:3333"))).toEqual([token.id]);
  });
});
