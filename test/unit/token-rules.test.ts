/**
 * The token use cases' rules on in-memory stores (test/support/fakes.ts): cvc lifetime and types, data checks
 * per type, ids, deduplication, access rules, expiry, PATCH and DELETE. Moved from test/integration/tokens.test.ts,
 * which keeps what needs HTTP or DynamoDB (status codes of the schema, concurrency, what is stored, the log route).
 */
import { describe, expect, it } from "vitest";
import { DomainError, type ErrorKind } from "#shared/domain/errors.ts";
import { createToken } from "#shared/domain/tokens/create.ts";
import { deleteToken, getToken, listTokens, patchToken } from "#shared/domain/tokens/manage.ts";
import type { TokenType } from "#shared/domain/tokens/types.ts";
import { tokenTenant } from "#test/support/fakes.ts";
import { MASTERCARD, ROUTING, VISA } from "#test/support/tokens.ts";

const card = { number: VISA, expiration_month: 12, expiration_year: 2030, cvc: "123" };
const cardWithoutCvc = { number: VISA, expiration_month: 12, expiration_year: 2030 };

/** The domain error a use case failed with (the HTTP layer maps its kind to a status: invalid 400, …). */
async function failure(promise: Promise<unknown>): Promise<DomainError> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof DomainError) return error;
    throw error;
  }
  throw new Error("the use case did not fail");
}

const kindOf = async (promise: Promise<unknown>): Promise<ErrorKind> => (await failure(promise)).kind;
const page = { page: 1, size: 20 };

describe("creating tokens", () => {
  it("reveals data and cvc to a revealing rule, and stops showing the cvc after an hour", async () => {
    const t = tokenTenant();
    const created = await createToken(t.deps, t.pub, { type: "card", data: card });

    const fresh = await getToken(t.deps, t.revealer, created.id);
    t.clock.advance(3601);
    const later = await getToken(t.deps, t.revealer, created.id);

    expect(fresh.data).toEqual(card);
    expect(later.data).toEqual(cardWithoutCvc);
  });

  it("keeps a cvc sent as an integer a number and a 0-padded string a string, each for one hour", async () => {
    const t = tokenTenant();
    const numeric = { ...card, cvc: 123 };
    const padded = { ...card, cvc: "0123" };
    const created = await Promise.all(
      [numeric, padded].map((data) => createToken(t.deps, t.pub, { type: "card", data })),
    );
    const read = () => Promise.all(created.map((c) => getToken(t.deps, t.revealer, c.id)));

    const fresh = await read();
    t.clock.advance(3601);
    const later = await read();

    expect(fresh.map((r) => r.data)).toEqual([numeric, padded]);
    expect(later.map((r) => r.data)).toEqual([cardWithoutCvc, cardWithoutCvc]);
  });

  it("keeps the type of a cvc changed by PATCH", async () => {
    const t = tokenTenant();
    const created = await createToken(t.deps, t.pub, { type: "card", data: card });

    await patchToken(t.deps, t.pub, created.id, { data: { cvc: 4567 } });
    const read = await getToken(t.deps, t.revealer, created.id);

    expect(read.data).toEqual({ ...card, cvc: 4567 });
  });

  it.each([
    [12, "an integer that lost its leading 0"],
    [12345, "five digits"],
    [123.5, "not an integer"],
    [-123, "negative"],
    ["12a", "not digits"],
  ] as [unknown, string][])("refuses a cvc of %j (%s) as invalid on data.cvc", async (cvc) => {
    const t = tokenTenant();

    const error = await failure(createToken(t.deps, t.pub, { type: "card", data: { number: VISA, cvc } }));

    expect(error.kind).toBe("invalid");
    expect(error.errors).toHaveProperty(["data.cvc"]);
    expect(JSON.stringify({ detail: error.detail, errors: error.errors })).not.toContain(VISA);
  });

  it.each([
    ["card", { number: "4242424242424241" }, "data.number"],
    ["card", { number: VISA, expiration_month: 13 }, "data.expiration_month"],
    ["card", { number: VISA, expiration_year: 30 }, "data.expiration_year"],
    ["card", { number: VISA, cvc: "12345" }, "data.cvc"],
    ["card", { number: "4242-4242-4242-4242" }, "data.number"],
    ["card", { expiration_month: 1 }, "data.number"],
    ["bank", { routing_number: "021000022", account_number: "1234" }, "data.routing_number"],
    ["bank", { routing_number: ROUTING, account_number: "123456789012345678" }, "data.account_number"],
    ["card_number", "1234", "data"],
    ["us_bank_routing_number", "123456789", "data"],
    ["social_security_number", "000-12-3456", "data"],
    ["employer_id_number", "98-76", "data"],
  ] as [TokenType, unknown, string][])(
    "refuses a %s with invalid data (%j) as invalid on %s",
    async (type, data, field) => {
      const t = tokenTenant();

      const error = await failure(createToken(t.deps, t.pub, { type, data }));

      expect(error.kind).toBe("invalid");
      expect(error.errors).toHaveProperty([field]);
      expect(JSON.stringify({ detail: error.detail, errors: error.errors })).not.toContain(
        typeof data === "string" ? data : String((data as { number?: string }).number ?? "§"),
      );
    },
  );

  it("refuses an expires_at it cannot read or that is past", async () => {
    const t = tokenTenant();
    const create = (expires_at: string) =>
      createToken(t.deps, t.pub, { type: "token", data: "x", expires_at });

    const errors = await Promise.all([failure(create("someday")), failure(create("1/1/2000"))]);

    expect(errors.map((e) => e.kind)).toEqual(["invalid", "invalid"]);
    expect(errors[0]?.errors).toHaveProperty(["expires_at"]);
  });

  it("accepts a literal id once (a conflict after), and alias expressions for ids", async () => {
    const t = tokenTenant();

    const first = await createToken(t.deps, t.pub, { type: "token", data: "x", id: "my-token-1" });
    const again = await kindOf(createToken(t.deps, t.pub, { type: "token", data: "y", id: "my-token-1" }));
    const alias = await createToken(t.deps, t.pub, {
      type: "card_number",
      data: VISA,
      id: "{{ data | alias_preserve_format }}",
    });
    const badIds = await Promise.all(
      ["a/b/c", "ab"].map((id) => failure(createToken(t.deps, t.pub, { type: "token", data: "x", id }))),
    );

    expect(first.id).toBe("my-token-1");
    expect(again).toBe("conflict");
    expect(alias.id).toMatch(/^\d{16}$/);
    expect(alias.id).not.toBe(VISA);
    expect(badIds.map((e) => e.errors)).toEqual([{ id: [expect.any(String)] }, { id: [expect.any(String)] }]);
  });

  it("deduplicates by fingerprint when asked, and shows a masked caller no fingerprint", async () => {
    const t = tokenTenant();
    const input = {
      type: "card" as const,
      data: { number: MASTERCARD, expiration_month: 1, expiration_year: 2031 },
      deduplicate_token: true,
    };

    const first = await createToken(t.deps, t.reader, input);
    const second = await createToken(t.deps, t.reader, input);
    const notDeduped = await createToken(t.deps, t.reader, { ...input, deduplicate_token: false });

    expect(second.id).toBe(first.id);
    expect(second).not.toHaveProperty("fingerprint");
    expect(notDeduped.id).not.toBe(first.id);
  });

  it("finds a token created without deduplication when a later create asks for it", async () => {
    const t = tokenTenant();
    const input = { type: "card_number" as const, data: "4000056655665556" };

    const plain = await createToken(t.deps, t.reader, input);
    const repeat = await createToken(t.deps, t.reader, input);
    const deduped = await createToken(t.deps, t.reader, { ...input, deduplicate_token: true });

    expect(repeat.id).not.toBe(plain.id);
    expect(deduped.id).toBe(plain.id);
  });

  it("lets the next create without deduplication claim a value whose claiming token was deleted", async () => {
    const t = tokenTenant();
    const input = { type: "card_number" as const, data: "4000002500003155" };

    const first = await createToken(t.deps, t.reader, input);
    const repeat = await createToken(t.deps, t.reader, input);
    await deleteToken(t.deps, t.reader, first.id);
    const next = await createToken(t.deps, t.reader, input);
    const deduped = await createToken(t.deps, t.reader, { ...input, deduplicate_token: true });

    expect(repeat.id).not.toBe(first.id);
    // The repeat found the value claimed by the first; once that claim is gone, the next create takes it.
    expect(deduped.id).toBe(next.id);
  });

  it("claims no fingerprint for a create refused because its id is taken", async () => {
    const t = tokenTenant();
    const create = (input: { id?: string; data: string; deduplicate_token?: boolean }) =>
      createToken(t.deps, t.reader, { type: "card_number", ...input });

    await create({ id: "claim-id-taken", data: "4000056655665556" });
    const refused = await kindOf(create({ id: "claim-id-taken", data: "5555555555554444" }));
    const deduped = await create({ data: "5555555555554444", deduplicate_token: true });

    expect(refused).toBe("conflict");
    expect(deduped.id).not.toBe("claim-id-taken");
  });
});

describe("reading tokens", () => {
  it("applies access rules: redact, mask, reveal, and forbidden without a matching rule", async () => {
    const t = tokenTenant();
    const pci = await createToken(t.deps, t.pub, { type: "card_number", data: VISA });
    const bank = await createToken(t.deps, t.pub, {
      type: "bank",
      data: { routing_number: ROUTING, account_number: "12345678" },
    });
    const general = await createToken(t.deps, t.pub, { type: "token", data: { a: 1 } });
    const ruled = t.app({
      rules: [
        { priority: 1, container: "/pci/", transform: "redact", permissions: ["token:read"] },
        { priority: 2, container: "/bank/", transform: "mask", permissions: ["token:read"] },
        { priority: 3, container: "/bank/", transform: "reveal", permissions: ["token:read"] },
      ],
    });

    const redacted = await getToken(t.deps, ruled, pci.id);
    const masked = await getToken(t.deps, ruled, bank.id);
    const forbidden = await kindOf(getToken(t.deps, ruled, general.id));
    const list = await listTokens(t.deps, ruled, {}, page);

    expect(redacted).not.toHaveProperty("data");
    expect(masked.data).toEqual({ routing_number: ROUTING, account_number: "XXXX5678" });
    expect(forbidden).toBe("forbidden");
    expect(list.total).toBe(2);
    expect(list.items.map((i) => i.id).sort()).toEqual([pci.id, bank.id].sort());
  });

  it("masks for plain token:read, shows no data of a token without a mask, and refuses keys without it", async () => {
    const t = tokenTenant();
    const ssn = await createToken(t.deps, t.pub, { type: "social_security_number", data: "123-45-6789" });
    const plain = await createToken(t.deps, t.pub, { type: "token", data: "hello" });

    const maskedSsn = await getToken(t.deps, t.reader, ssn.id);
    const noMask = await getToken(t.deps, t.reader, plain.id);
    const publicRead = await kindOf(getToken(t.deps, t.pub, ssn.id));

    expect(maskedSsn.data).toBe("XXXXXXX6789");
    expect(noMask).not.toHaveProperty("data");
    expect(publicRead).toBe("forbidden");
  });
});

describe("expiry", () => {
  it("reads the spec's expires_at formats and answers ISO 8601", async () => {
    const t = tokenTenant();
    const make = (expires_at: string) => createToken(t.deps, t.pub, { type: "token", data: "x", expires_at });

    const withOffset = await make("12/31/2099 11:59:59 PM +02:00");
    const shortDate = await make("1/2/2099");
    const iso = await make("2099-05-06T07:08:09Z");

    expect(withOffset.expires_at).toBe("2099-12-31T21:59:59.000Z");
    expect(shortDate.expires_at).toBe("2099-01-02T00:00:00.000Z");
    expect(iso.expires_at).toBe("2099-05-06T07:08:09.000Z");
  });

  it("makes an expired token not found at once and leaves it out of lists", async () => {
    const t = tokenTenant();
    const soon = new Date(t.clock.now().getTime() + 10 * 60_000).toISOString();
    const token = await createToken(t.deps, t.pub, { type: "token", data: "x", expires_at: soon });
    await createToken(t.deps, t.pub, { type: "token", data: "keeps" });
    const before = await getToken(t.deps, t.revealer, token.id);

    t.clock.advance(3 * 3600);
    const after = await kindOf(getToken(t.deps, t.revealer, token.id));
    const list = await listTokens(t.deps, t.revealer, {}, page);

    expect(before.id).toBe(token.id);
    expect(after).toBe("not-found");
    expect(list.items.map((i) => i.id)).not.toContain(token.id);
    expect(list.total).toBe(1);
  });
});

describe("PATCH and DELETE", () => {
  it("merge-patches data, mask and metadata, replaces the rest, and answers masked like a read", async () => {
    const t = tokenTenant();
    const created = await createToken(t.deps, t.pub, {
      type: "card",
      data: { number: VISA, expiration_month: 1, expiration_year: 2030 },
      metadata: { a: "1", b: "2" },
    });

    const patched = await patchToken(t.deps, t.pub, created.id, {
      data: { expiration_month: 6 },
      metadata: { a: null, c: "3" },
    });
    const read = await getToken(t.deps, t.revealer, created.id);

    expect(patched.data).toEqual({ number: "XXXXXXXXXXXX4242", expiration_month: 6, expiration_year: 2030 });
    expect(read.data).toEqual({ number: VISA, expiration_month: 6, expiration_year: 2030 });
    expect(read.metadata).toEqual({ b: "2", c: "3" });
    expect(read.modified_at).toEqual(expect.any(String));
  });

  it("refuses invalid patched data, changing nothing", async () => {
    const t = tokenTenant();
    const created = await createToken(t.deps, t.pub, { type: "card", data: { number: VISA } });

    const badData = await kindOf(patchToken(t.deps, t.pub, created.id, { data: { number: "1111" } }));
    const read = await getToken(t.deps, t.revealer, created.id);

    expect(badData).toBe("invalid");
    expect(read.data).toEqual({ number: VISA });
    expect(read.metadata).toBeUndefined();
  });

  it("needs reveal-level token:update on both containers to move a token", async () => {
    const t = tokenTenant();
    // Reveal: a move changes who may see the data (issue 10; test/integration/attacks/container-move.test.ts).
    const mover = t.app({
      rules: [{ priority: 1, container: "/general/", transform: "reveal", permissions: ["token:update"] }],
    });
    const token = await createToken(t.deps, t.pub, { type: "token", data: "x" });

    const refused = await kindOf(patchToken(t.deps, mover, token.id, { containers: ["/pci/"] }));
    const allowed = await patchToken(t.deps, mover, token.id, { containers: ["/general/low/"] });

    expect(refused).toBe("forbidden");
    expect(allowed.containers).toEqual(["/general/low/"]);
  });

  it("deletes with token:delete only, then answers not found", async () => {
    const t = tokenTenant();
    const token = await createToken(t.deps, t.pub, { type: "token", data: "x" });

    const refused = await kindOf(deleteToken(t.deps, t.pub, token.id));
    await deleteToken(t.deps, t.reader, token.id);
    const after = await kindOf(getToken(t.deps, t.reader, token.id));

    expect(refused).toBe("forbidden");
    expect(after).toBe("not-found");
  });
});
