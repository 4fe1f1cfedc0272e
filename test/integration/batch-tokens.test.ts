import { describe, expect, it } from "vitest";
import { BATCH_CLAIM_GRACE_SECONDS, BATCH_REQUEST_SECONDS } from "#shared/domain/transactions.ts";
import { advanceTestClock, useService } from "#test/support/service.ts";
import { appKey, revealEverything, type TokenBody, tenantWithOwner, VISA } from "#test/support/tokens.ts";

const svc = useService();

interface LogPage {
  data: { entity_id: string; operation: string; message: string }[];
  pagination: { total_items: number };
}
interface CursorPage {
  pagination: { page_size: number; next?: string };
  data: TokenBody[];
}

const card = (i: number) => ({
  type: "card",
  data: { number: VISA, expiration_month: 12, expiration_year: 2030 + (i % 5) },
  metadata: { n: String(i) },
});
const text = (value: string) => ({ type: "token", data: value });

async function setup() {
  const { api, tenant, owner } = await tenantWithOwner(svc);
  const reader = await appKey(api, tenant.managementKey, { type: "private", rules: revealEverything });
  const count = async () => {
    const page = await api.get<{ pagination: { total_items: number } }>("/tokens?size=1", { key: reader });
    return page.body.pagination.total_items;
  };
  return { api, ...tenant, owner, reader, count };
}

describe("POST /tokenize", () => {
  it("tokenizes bare values as `token`s answered by their ids, under the same container rules", async () => {
    const { api, managementKey, owner, reader, count } = await setup();
    const before = await count();

    const res = await api.post<{ name: string; tags: [string, number | null]; vip: boolean | string }>(
      "/tokenize",
      { key: owner, body: { name: "John", tags: ["gold", null], vip: true } },
    );

    expect(res.status).toBe(201);
    expect(res.body.tags[1]).toBeNull();
    const ids = [res.body.name, res.body.tags[0], res.body.vip] as string[];
    const read = await Promise.all(ids.map((id) => api.get<TokenBody>(`/tokens/${id}`, { key: reader })));
    expect(read.map((r) => [r.body.type, r.body.data])).toEqual([
      ["token", "John"],
      ["token", "gold"],
      ["token", true],
    ]);
    // A key that may create only under /pci/ cannot put bare values (default container /general/high/) anywhere.
    const pciOnly = await appKey(api, managementKey, {
      type: "private",
      rules: [
        {
          description: "pci",
          priority: 1,
          container: "/pci/",
          transform: "mask",
          permissions: ["token:create"],
        },
      ],
    });
    const refused = await api.post("/tokenize", { key: pciOnly, body: { name: "Jane", card: card(1) } });
    expect(refused.status).toBe(403);
    expect(await count()).toBe(before + 3);
  });

  it("answers the body's shape: one request, an array, and nested objects of them", async () => {
    const { api, owner, reader } = await setup();
    const one = await api.post<TokenBody>("/tokenize", { key: owner, body: text("alone") });
    expect(one.status).toBe(201);
    const single = await api.post<TokenBody>("/tokens", { key: owner, body: text("alone") });
    // Answered as POST /tokens answers (the create rule's transform), field for field.
    const { id: _a, created_at: _b, ...batched } = one.body;
    const { id: _c, created_at: _d, ...alone } = single.body;
    expect(batched).toEqual(alone);

    const nested = await api.post<{
      first: TokenBody;
      group: { cards: TokenBody[]; note: TokenBody };
    }>("/tokenize", {
      key: owner,
      body: { first: text("a"), group: { cards: [card(1), card(2)], note: text("b") } },
    });
    expect(nested.status).toBe(201);
    expect(nested.body.first.type).toBe("token");
    expect(nested.body.group.note.type).toBe("token");
    expect(nested.body.group.cards.map((c) => c.type)).toEqual(["card", "card"]);
    const read = (id: string | undefined) => api.get<TokenBody>(`/tokens/${id}`, { key: reader });
    expect((await read(nested.body.first.id)).body.data).toBe("a");
    expect((await read(nested.body.group.note.id)).body.data).toBe("b");

    const secondCard = await read(nested.body.group.cards[1]?.id);
    expect(secondCard.status).toBe(200);
    expect(secondCard.body.metadata).toEqual({ n: "2" });
  });

  it("creates 150 at once, and one bad request among 150 stores nothing", async () => {
    const { api, owner, count } = await setup();
    const batch = Array.from({ length: 150 }, (_, i) => card(i));
    const ok = await api.post<TokenBody[]>("/tokenize", { key: owner, body: batch });
    expect(ok.status).toBe(201);
    expect(ok.body).toHaveLength(150);
    expect(new Set(ok.body.map((t) => t.id)).size).toBe(150);
    expect(await count()).toBe(150);

    // Invalid data: refused before anything is written, named by its path.
    const invalid = structuredClone(batch);
    (invalid[149] as { data: { number: string } }).data.number = "4242424242424241";
    const refused = await api.post<{ errors: Record<string, string[]> }>("/tokenize", {
      key: owner,
      body: invalid,
    });
    expect(refused.status).toBe(400);
    expect(Object.keys(refused.body.errors).some((field) => field.startsWith("149."))).toBe(true);

    // A taken id found only while writing (the 150th): everything staged before it is rolled back.
    const taken = await api.post<TokenBody>("/tokens", {
      key: owner,
      body: { ...text("x"), id: "taken-id" },
    });
    expect(taken.status).toBe(201);
    const late = [...batch.slice(0, 149), { ...text("y"), id: "taken-id" }];
    const conflict = await api.post<{ detail: string }>("/tokenize", { key: owner, body: late });
    expect(conflict.status).toBe(409);
    expect(conflict.body.detail).toContain("149");
    expect(await count()).toBe(151);
    // The same in a batch small enough for one write.
    const small = await api.post("/tokenize", {
      key: owner,
      body: [text("z1"), { ...text("z2"), id: "taken-id" }],
    });
    expect(small.status).toBe(409);
    expect(await count()).toBe(151);
  });

  it("checks token:create on each request's container, and stores nothing when one is refused", async () => {
    const { api, managementKey, count } = await setup();
    const writer = await appKey(api, managementKey, {
      type: "private",
      rules: [
        {
          description: "pci",
          priority: 1,
          container: "/pci/",
          transform: "mask",
          permissions: ["token:create"],
        },
      ],
    });
    const inPci = (i: number) => ({ ...card(i), containers: ["/pci/"] });
    const refused = await api.post<{ detail: string }>("/tokenize", {
      key: writer,
      body: [inPci(1), inPci(2), { ...text("elsewhere"), containers: ["/general/"] }],
    });
    expect(refused.status).toBe(403);
    expect(refused.body.detail).toContain("/general/");
    expect(await count()).toBe(0);

    const allowed = await api.post<TokenBody[]>("/tokenize", { key: writer, body: [inPci(1), inPci(2)] });
    expect(allowed.status).toBe(201);
    // Answered as the create rule says: masked.
    expect(allowed.body[0]?.data).toMatchObject({ number: "XXXXXXXXXXXX4242" });
    expect(await count()).toBe(2);
  });

  it("audits each token as a single create is", async () => {
    const { api, owner, managementKey } = await setup();
    const res = await api.post<TokenBody[]>("/tokenize", { key: owner, body: [text("a"), text("b")] });
    for (const token of res.body) {
      const logs = await api.get<LogPage>(`/logs?entity_id=${token.id}`, { key: managementKey });
      expect(logs.body.data.map((l) => l.operation)).toEqual(["create"]);
    }
  });

  it("deduplicates as single creates do, within the batch and against stored tokens", async () => {
    const { api, owner, count } = await setup();
    const dedup = (value: string) => ({ ...text(value), deduplicate_token: true });
    const stored = await api.post<TokenBody>("/tokens", { key: owner, body: dedup("same") });
    const res = await api.post<TokenBody[]>("/tokenize", {
      key: owner,
      body: [dedup("same"), dedup("new"), dedup("new"), text("new")],
    });
    expect(res.status).toBe(201);
    expect(res.body[0]?.id).toBe(stored.body.id);
    expect(res.body[2]?.id).toBe(res.body[1]?.id);
    expect(res.body[2]).toEqual(res.body[1]);
    expect(res.body[3]?.id).not.toBe(res.body[1]?.id);
    expect(await count()).toBe(3);
    // A later request of the same value answers what the earlier one got, also a stored token.
    const twice = await api.post<TokenBody[]>("/tokenize", {
      key: owner,
      body: [dedup("same"), dedup("same")],
    });
    expect(twice.status).toBe(201);
    expect(twice.body.map((t) => t.id)).toEqual([stored.body.id, stored.body.id]);
    expect(await count()).toBe(3);
  });

  it("answers a deduplicated request before its commit: a duplicate whose answer fails stores nothing of the batch", async () => {
    // The answer of a request deduplicated to a stored token was built after the commit: a mask that reads the
    // cvc, gone an hour later, answered 400 for a batch that was stored, and each retry stored it again
    // (import review, 27 Nov).
    const { api, managementKey, count } = await setup();
    const masker = await appKey(api, managementKey, {
      type: "private",
      rules: [
        { priority: 1, container: "/", transform: "mask", permissions: ["token:create", "token:read"] },
      ],
    });
    const card = { number: VISA, expiration_month: 12, expiration_year: 2030 };
    const mask = { number: "{{ data.number | reveal_last: data.cvc }}" };
    const existing = await api.post<TokenBody>("/tokens", {
      key: masker,
      body: { type: "card", data: { ...card, cvc: "737" }, mask, deduplicate_token: true },
    });
    expect(existing.status).toBe(201);
    await advanceTestClock(svc, 3601);
    const batch = [text("new value"), { type: "card", data: card, deduplicate_token: true }];
    for (let attempt = 0; attempt < 3; attempt++) {
      const res = await api.post<{ detail: string }>("/tokenize", { key: masker, body: batch });
      expect(res.status).toBe(400);
      expect(res.body.detail).toContain("the token request at 1");
    }
    expect(await count()).toBe(1);
  });

  it("keeps one token for a deduplicated value two overlapping staged batches hold (one waits or retries)", async () => {
    const { api, owner, reader } = await setup();
    const value = { ...card(0), deduplicate_token: true };
    const batch = (prefix: string) => [
      value,
      ...Array.from({ length: 120 }, (_, i) => text(`${prefix}-${i}`)),
    ];
    // The first batch to reach its commit waits there until the other has answered: both stage meanwhile.
    const transactions = svc.service.deps.transactions;
    const commit = transactions.commit.bind(transactions);
    let otherAnswered = () => {};
    const answered = new Promise<void>((resolve) => {
      otherAnswered = resolve;
    });
    let first = true;
    transactions.commit = async (...args) => {
      if (first) {
        first = false;
        await Promise.race([answered, new Promise((resolve) => setTimeout(resolve, 15_000))]);
      }
      return commit(...args);
    };
    try {
      const send = (prefix: string) =>
        api.post<TokenBody[]>("/tokenize", { key: owner, body: batch(prefix) }).finally(otherAnswered);
      const answers = await Promise.all([send("a"), send("b")]);
      // The younger batch gave up (or the older waited for the younger's commit): 409, to be retried.
      const refused = answers.filter((a) => a.status === 409);
      expect(answers.map((a) => a.status).sort()).toEqual([201, 409]);
      expect(JSON.stringify(refused[0]?.body)).toContain("still being processed");
      const done = answers.find((a) => a.status === 201)?.body[0]?.id;
      const retried = await api.post<TokenBody[]>("/tokenize", { key: owner, body: batch("c") });
      expect(retried.body[0]?.id).toBe(done);
      const cards = await api.get<{ data: unknown[] }>("/tokens?type=card", { key: reader });
      expect(cards.body.data).toHaveLength(1);
    } finally {
      transactions.commit = commit;
    }
  });

  it("holds a value no longer than a batch's request can run: a dead batch's claim is then taken over", async () => {
    const { api, owner } = await setup();
    const value = { ...card(0), deduplicate_token: true };
    await api.post("/tokens", { key: owner, body: { ...text("x"), id: "taken-by-test" } });
    const batch = [
      value,
      ...Array.from({ length: 120 }, (_, i) => text(`v${i}`)),
      { ...text("y"), id: "taken-by-test" },
    ];
    // The batch stages (its card pending, claimed), meets a taken id, and its rollback dies with the request.
    const transactions = svc.service.deps.transactions;
    const rollback = transactions.rollback.bind(transactions);
    transactions.rollback = () => Promise.reject(new Error("simulated crash"));
    try {
      expect((await api.post("/tokenize", { key: owner, body: batch })).status).toBe(500);
    } finally {
      transactions.rollback = rollback;
    }
    // No request runs that long (and no commit it began can still land): the batch is dead.
    await advanceTestClock(svc, BATCH_REQUEST_SECONDS + BATCH_CLAIM_GRACE_SECONDS + 1);

    const created = await api.post<TokenBody>("/tokens", { key: owner, body: value });
    expect(created.status).toBe(201); // at once, not a 409 until the sweep ends the batch 15 minutes later
  });

  it("keeps the claims of a batch whose request died past its commit point (the sweep makes it live)", async () => {
    const { api, owner, reader } = await setup();
    const body = Array.from({ length: 120 }, (_, i) => ({
      ...text(`dead value ${i}`),
      id: `dead-${i}`,
      deduplicate_token: true,
    }));
    // Committed (the record flipped), then the request dies while unlocking its creates.
    const holder = svc.service.deps.transactions as unknown as Record<string, unknown>;
    const rollForward = holder.rollForward;
    holder.rollForward = () => Promise.reject(new Error("simulated crash"));
    try {
      expect((await api.post("/tokenize", { key: owner, body })).status).toBe(500);
    } finally {
      holder.rollForward = rollForward;
    }
    await advanceTestClock(svc, BATCH_REQUEST_SECONDS + BATCH_CLAIM_GRACE_SECONDS + 1);
    const single = await api.post<TokenBody>("/tokens", { key: owner, body: { ...body[0], id: undefined } });
    await advanceTestClock(svc, 20 * 60); // the sweep finishes the committed batch

    expect(single.status).toBe(409); // retried later; it was a 201 and a second token for the value
    expect((await api.get<TokenBody>("/tokens/dead-0", { key: reader })).status).toBe(200);
    const again = await api.post<TokenBody>("/tokens", { key: owner, body: { ...body[0], id: undefined } });
    expect(again.body.id).toBe("dead-0");
  });

  it("commits nothing past its answer-by, and no value it holds is taken over before a late commit could land", async () => {
    const { api, owner, reader } = await setup();
    const value = { ...card(0), deduplicate_token: true };
    const body = [value, ...Array.from({ length: 120 }, (_, i) => text(`slow-${i}`))];
    // A slow batch (no request limit locally): past its answer-by when it commits; meanwhile a create of its value.
    const transactions = svc.service.deps.transactions;
    const commit = transactions.commit.bind(transactions);
    let single = 0;
    transactions.commit = async (record, _readTooEarly, audit) => {
      transactions.commit = commit;
      svc.service.deps.testClock?.advance(BATCH_REQUEST_SECONDS + 1);
      single = (await api.post<TokenBody>("/tokens", { key: owner, body: value })).status;
      return commit(record, svc.service.deps.clock.now(), audit);
    };
    const batch = await api.post<TokenBody[]>("/tokenize", { key: owner, body }).finally(() => {
      transactions.commit = commit;
    });

    expect([batch.status, single]).toEqual([409, 409]); // the batch ran out of time; the value was still held
    const cards = await api.get<{ data: unknown[] }>("/tokens?type=card", { key: reader });
    expect(cards.body.data).toHaveLength(0);
  });

  it("is idempotent: the same key answers the same tokens, created once", async () => {
    const { api, owner, count } = await setup();
    const headers = { "svc-idempotency-key": "batch-1" };
    const body = [text("a"), text("b"), text("c")];
    const first = await api.post<TokenBody[]>("/tokenize", { key: owner, body, headers });
    const again = await api.post<TokenBody[]>("/tokenize", { key: owner, body, headers });
    expect(first.status).toBe(201);
    expect(again.status).toBe(201);
    expect(again.headers.get("svc-idempotent-replayed")).toBe("true");
    expect(again.body.map((t) => t.id)).toEqual(first.body.map((t) => t.id));
    expect(await count()).toBe(3);

    // A batch that failed took no effect: the same key runs the corrected batch (one write, and staged).
    for (const size of [2, 120]) {
      const retry = { "svc-idempotency-key": `failed-${size}` };
      const values = Array.from({ length: size - 1 }, (_, i) => text(`${size}-${i}`));
      const failed = await api.post("/tokenize", {
        key: owner,
        body: [...values, { ...text("dup"), id: first.body[0]?.id }],
        headers: retry,
      });
      expect(failed.status).toBe(409);
      const fixed = await api.post<TokenBody[]>("/tokenize", { key: owner, body: values, headers: retry });
      expect(fixed.status).toBe(201);
      expect(fixed.headers.get("svc-idempotent-replayed")).toBeNull();
      expect(fixed.body).toHaveLength(size - 1);
    }
    expect(await count()).toBe(3 + 1 + 119);
  });

  it("records a staged batch's effect with its commit only: its roll-forward writes leave the idempotency record alone", async () => {
    // Each roll-forward write carried an update of the request's idempotency record: in the one-by-one fallback, 10
    // transactions at once on one item (conflicts in DynamoDB), and a lapsed claim failed writes of a commit made.
    const { api, owner, count } = await setup();
    const touching: string[] = [];
    const { dynamo } = svc.service.deps;
    dynamo.middlewareStack.add(
      (next, context) => (args) => {
        const input = args.input as { TransactItems?: { Update?: { Key?: { PK?: string } } }[] };
        if (context.commandName === "TransactWriteItemsCommand")
          for (const item of input.TransactItems ?? [])
            if (String(item.Update?.Key?.PK ?? "").startsWith("IDEMP#")) touching.push(context.commandName);
        return next(args);
      },
      { step: "initialize", name: "watchIdempotencyRecord" },
    );
    try {
      const body = Array.from({ length: 120 }, (_, i) => text(`rolled-${i}`));
      const res = await api.post("/tokenize", {
        key: owner,
        body,
        headers: { "svc-idempotency-key": "rolled" },
      });
      expect(res.status).toBe(201);
    } finally {
      dynamo.middlewareStack.remove("watchIdempotencyRecord");
    }
    expect(touching).toHaveLength(1);
    expect(await count()).toBe(120);
  });

  it("refuses more than 250 token requests, and SVC-TRANSACTION-ID", async () => {
    const { api, owner, count } = await setup();
    const tooMany = await api.post("/tokenize", {
      key: owner,
      body: Array.from({ length: 251 }, (_, i) => text(`v${i}`)),
    });
    expect(tooMany.status).toBe(400);
    const inTxn = await api.post("/tokenize", {
      key: owner,
      body: [text("a")],
      headers: { "svc-transaction-id": crypto.randomUUID() },
    });
    expect(inTxn.status).toBe(400);
    expect(await count()).toBe(0);
  });
});

describe("POST /detokenize", () => {
  it("replaces expressions as the caller's token:read shows each token, one read entry per token", async () => {
    const { api, owner, reader, managementKey } = await setup();
    const masker = await appKey(api, managementKey, {
      type: "private",
      rules: [
        { description: "m", priority: 1, container: "/", transform: "mask", permissions: ["token:read"] },
      ],
    });
    const [cardToken, note] = (
      await api.post<TokenBody[]>("/tokenize", { key: owner, body: [card(1), text("hi")] })
    ).body as [TokenBody, TokenBody];
    const body = {
      card: `{{ ${cardToken.id} }}`,
      last4: `{{ token: ${cardToken.id} | json: '$.number' | slice: -4, 4 }}`,
      sentence: `say {{ ${note.id} }}!`,
      untouched: 42,
    };
    const revealed = await api.post("/detokenize", { key: reader, body });
    expect(revealed.status).toBe(200);
    expect(revealed.body).toEqual({
      card: { number: VISA, expiration_month: 12, expiration_year: 2031 },
      last4: "4242",
      sentence: "say hi!",
      untouched: 42,
    });
    const masked = await api.post<{ card: { number: string } }>("/detokenize", { key: masker, body });
    expect(masked.status).toBe(200);
    expect(masked.body.card.number).toBe("XXXXXXXXXXXX4242");

    const logs = await api.get<LogPage>(`/logs?entity_id=${cardToken.id}`, { key: managementKey });
    expect(logs.body.data.filter((l) => l.message === "Token read by detokenize")).toHaveLength(2);
  });

  it("refuses more than 100 tokens, and unknown tokens, with problem+json", async () => {
    const { api, owner, reader } = await setup();
    const tokens = (
      await api.post<TokenBody[]>("/tokenize", {
        key: owner,
        body: Array.from({ length: 101 }, (_, i) => text(`v${i}`)),
      })
    ).body;
    const tooMany = await api.post<{ detail: string }>("/detokenize", {
      key: owner,
      body: tokens.map((t) => `{{ ${t.id} }}`),
    });
    expect(tooMany.status).toBe(400);
    expect(tooMany.headers.get("content-type")).toContain("application/problem+json");
    const hundred = await api.post<string[]>("/detokenize", {
      key: reader,
      body: tokens.slice(0, 100).map((t) => `{{ ${t.id} }}`),
    });
    expect(hundred.status).toBe(200);
    expect(hundred.body[99]).toBe("v99");
    const unknown = await api.post<{ detail: string }>("/detokenize", {
      key: owner,
      body: { a: "{{ no-such-token }}" },
    });
    expect(unknown.status).toBe(400);
    expect(unknown.body.detail).toContain("does not exist");
  });
});

describe("GET /v2/tokens", () => {
  it("pages by cursor with no total, filtered by type, container, fingerprint and metadata", async () => {
    const { api, owner, reader } = await setup();
    const created = (
      await api.post<TokenBody[]>("/tokenize", {
        key: owner,
        body: [
          ...Array.from({ length: 7 }, (_, i) => card(i)),
          { ...text("in blue"), containers: ["/blue/x/"], metadata: { Team: "Blue" } },
          { ...text("other"), metadata: { team: "red" } },
          text("twice"),
          text("twice"),
        ],
      })
    ).body;
    const seen: string[] = [];
    let next: string | undefined;
    do {
      const page: { status: number; body: CursorPage } = await api.get<CursorPage>(
        `/v2/tokens?size=3${next ? `&start=${encodeURIComponent(next)}` : ""}`,
        { key: reader },
      );
      expect(page.status).toBe(200);
      expect(page.body.pagination).not.toHaveProperty("total_items");
      expect(page.body.data.length).toBeLessThanOrEqual(3);
      seen.push(...page.body.data.map((t) => t.id));
      next = page.body.pagination.next;
    } while (next);
    expect(seen.sort()).toEqual(created.map((t) => t.id).sort());

    const cards = await api.get<CursorPage>("/v2/tokens?type=card&size=100", { key: reader });
    expect(cards.body.data).toHaveLength(7);
    const blueBox = await api.get<CursorPage>(`/v2/tokens?container=${encodeURIComponent("/blue/")}`, {
      key: reader,
    });
    expect(blueBox.body.data.map((t) => t.data)).toEqual(["in blue"]);
    const blue = await api.get<CursorPage>(
      `/v2/tokens?metadata=${encodeURIComponent(JSON.stringify({ team: "blue" }))}`,
      { key: reader },
    );
    expect(blue.body.data.map((t) => t.data)).toEqual(["in blue"]);
    const red = await api.get<CursorPage>("/v2/tokens?metadata.team=RED", { key: reader });
    expect(red.body.data.map((t) => t.data)).toEqual(["other"]);
    const twice = created.slice(-2);
    const fingerprint = (await api.get<TokenBody>(`/tokens/${twice[0]?.id}`, { key: reader })).body
      .fingerprint;
    const byFingerprint = await api.get<CursorPage>(
      `/v2/tokens?fingerprint=${encodeURIComponent(fingerprint)}`,
      { key: reader },
    );
    expect(byFingerprint.body.data.map((t) => t.id).sort()).toEqual(twice.map((t) => t.id).sort());
  });
});
