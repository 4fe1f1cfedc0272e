/**
 * What every TokenStore promises, run against the in-memory fake (test/unit/store-contract.test.ts) and the
 * DynamoDB store on DynamoDB Local (test/integration/store-contract.test.ts), so the fake cannot drift from the
 * store the service runs on. Each test works in a tenant of its own (the DynamoDB table is shared by the run).
 */
import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import type { LogEntry } from "#shared/domain/audit.ts";
import type { StoredToken } from "#shared/domain/tokens/token.ts";
import type { AuditLogStore, StagedCreate, TokenStore } from "#shared/ports/stores.ts";

export interface TokenStores {
  tokens: TokenStore;
  auditLog: AuditLogStore;
  /** What the sweep does at the end of a cvc's hour (the DynamoDB sweep store's removeCvc). */
  removeCvc(tenantId: string, tokenId: string, now: Date): Promise<void>;
}

const NOW = new Date("2031-03-01T12:00:00.000Z");
const at = (seconds: number) => new Date(NOW.getTime() + seconds * 1000);

/** A stored token of `tenant`; the store never reads its sealed fields, so they are placeholders. */
export function storedToken(tenant: string, fields: Partial<StoredToken> = {}): StoredToken {
  return {
    id: randomUUID(),
    tenant_id: tenant,
    type: "token",
    container: "/general/",
    sealed_data: "sealed",
    fingerprint: `fp-${randomUUID()}`,
    fingerprint_expression: "{{ data | stringify }}",
    created_at: NOW.toISOString(),
    version: 1,
    ...fields,
  };
}

export function auditEntry(
  token: Pick<StoredToken, "tenant_id" | "id">,
  fields: Partial<LogEntry> = {},
): LogEntry {
  return {
    id: randomUUID(),
    tenant_id: token.tenant_id,
    entity_type: "token",
    entity_id: token.id,
    operation: "create",
    message: "Token created",
    created_at: NOW.toISOString(),
    ...fields,
  };
}

const staged = (token: StoredToken, deduplicate = false): StagedCreate => ({
  token,
  deduplicate,
  audit: auditEntry(token),
});

export function tokenStoreContract(name: string, stores: () => Promise<TokenStores>): void {
  const setup = async () => ({ ...(await stores()), tenant: `contract-${randomUUID()}` });
  const create = (s: TokenStores, token: StoredToken, deduplicate = false, now = NOW) =>
    s.tokens.create(token, { deduplicate, now }, auditEntry(token));
  const idsOf = (tokens: { id: string }[]) => tokens.map((t) => t.id);

  describe(`TokenStore contract: ${name}`, () => {
    describe("conditional writes", () => {
      it("writes an id once: a second create of it is id-taken and changes nothing", async () => {
        const s = await setup();
        const first = storedToken(s.tenant, { metadata: { n: "1" } });

        const outcomes = [
          await create(s, first),
          await create(s, { ...first, metadata: { n: "2" }, fingerprint: "other" }),
        ];

        expect(outcomes).toEqual([{ outcome: "created" }, { outcome: "id-taken" }]);
        expect((await s.tokens.get(s.tenant, first.id))?.metadata).toEqual({ n: "1" });
        const log = await s.auditLog.list(s.tenant, { entityId: first.id }, { page: 1, size: 10 });
        expect(log.total).toBe(1);
      });

      it("deduplicates a create by its fingerprint claim, and a claim taken without deduplication counts", async () => {
        const s = await setup();
        const claimed = storedToken(s.tenant);
        const plain = storedToken(s.tenant);

        await create(s, claimed, true);
        const duplicate = storedToken(s.tenant, { fingerprint: claimed.fingerprint });
        const outcome = await create(s, duplicate, true);
        await create(s, plain, false);
        const afterPlain = await create(s, storedToken(s.tenant, { fingerprint: plain.fingerprint }), true);

        expect(outcome).toEqual({ outcome: "duplicate", tokenId: claimed.id });
        expect(await s.tokens.get(s.tenant, duplicate.id)).toBeUndefined();
        expect(afterPlain).toEqual({ outcome: "duplicate", tokenId: plain.id });
      });

      it("scopes claims by tenant and type", async () => {
        const s = await setup();
        const token = storedToken(s.tenant);
        await create(s, token, true);

        const otherType = await create(
          s,
          storedToken(s.tenant, { type: "card_number", fingerprint: token.fingerprint }),
          true,
        );
        const otherTenant = await create(
          s,
          storedToken(`${s.tenant}-b`, { fingerprint: token.fingerprint }),
          true,
        );

        expect([otherType, otherTenant]).toEqual([{ outcome: "created" }, { outcome: "created" }]);
      });

      it("honours no claim of a deleted or expired token", async () => {
        const s = await setup();
        const deleted = storedToken(s.tenant);
        const expiring = storedToken(s.tenant, { expires_at: at(60).toISOString() });
        await create(s, deleted, true);
        await create(s, expiring, true);

        const removal = await s.tokens.delete(deleted, auditEntry(deleted, { operation: "delete" }), {
          now: NOW,
        });
        const afterDelete = await create(
          s,
          storedToken(s.tenant, { fingerprint: deleted.fingerprint }),
          true,
        );
        const afterExpiry = await create(
          s,
          storedToken(s.tenant, { fingerprint: expiring.fingerprint }),
          true,
          at(120),
        );

        expect(removal).toBe("ok");
        expect(await s.tokens.get(s.tenant, deleted.id)).toBeUndefined();
        expect([afterDelete, afterExpiry]).toEqual([{ outcome: "created" }, { outcome: "created" }]);
      });

      it("replaces only the version it read; the loser of a race is a conflict", async () => {
        const s = await setup();
        const token = storedToken(s.tenant);
        await create(s, token);
        const update = (metadata: Record<string, string>) =>
          s.tokens.replace(
            { ...token, metadata, version: 2 },
            1,
            auditEntry(token, { operation: "update" }),
            { now: NOW, previous: token },
          );

        const [a, b] = await Promise.all([update({ by: "a" }), update({ by: "b" })]);
        const stale = await update({ by: "c" });
        const stored = await s.tokens.get(s.tenant, token.id);

        expect([a, b].sort()).toEqual(["conflict", "ok"]);
        expect(stale).toBe("conflict");
        expect(stored?.version).toBe(2);
        expect(stored?.metadata).toEqual({ by: a === "ok" ? "a" : "b" });
      });

      it("does not write back a cvc the sweep removed after the replace read it", async () => {
        const s = await setup();
        const cvcEnd = at(-1).toISOString();
        const token = storedToken(s.tenant, { sealed_cvc: "sealed cvc", cvc_expires_at: cvcEnd });
        const kept = storedToken(s.tenant, { sealed_cvc: "sealed cvc", cvc_expires_at: cvcEnd });
        await create(s, token);
        await create(s, kept);
        await s.removeCvc(s.tenant, token.id, NOW);
        const replace = (read: StoredToken, fields: Partial<StoredToken>) =>
          s.tokens.replace({ ...read, ...fields, version: 2 }, 1, auditEntry(read, { operation: "update" }), {
            now: NOW,
            previous: read,
          });

        // Both read with their cvc; the sweep removed one's since. Carrying it back is refused, the other goes in.
        expect(await replace(token, { metadata: { by: "patch" } })).toBe("conflict");
        expect(await replace(kept, { metadata: { by: "patch" } })).toBe("ok");
        const [stored, other] = await Promise.all([token, kept].map((t) => s.tokens.get(s.tenant, t.id)));
        expect(stored).toMatchObject({ version: 1 });
        expect(stored?.sealed_cvc).toBeUndefined();
        expect(other).toMatchObject({ version: 2, sealed_cvc: "sealed cvc", metadata: { by: "patch" } });
        // Read again (no cvc), the same change goes in; a new cvc (its own hour) needs no old one.
        const fresh = { ...(stored as StoredToken) };
        expect(await replace(fresh, { metadata: { by: "retry" } })).toBe("ok");
        const newCvc = { sealed_cvc: "new cvc", cvc_expires_at: at(3600).toISOString(), version: 3 };
        const second = { ...fresh, version: 2 };
        const outcome = await s.tokens.replace({ ...second, ...newCvc }, 2, auditEntry(second), {
          now: NOW,
          previous: second,
        });
        expect(outcome).toBe("ok");
      });

      it("moves the fingerprint claim with a replace that changes the fingerprint", async () => {
        const s = await setup();
        const token = storedToken(s.tenant);
        await create(s, token, true);

        const moved = await s.tokens.replace(
          { ...token, fingerprint: "fp-new", version: 2 },
          1,
          auditEntry(token, { operation: "update" }),
          { now: NOW, previous: token, previousFingerprint: token.fingerprint },
        );
        const underOld = await create(s, storedToken(s.tenant, { fingerprint: token.fingerprint }), true);
        const underNew = await create(s, storedToken(s.tenant, { fingerprint: "fp-new" }), true);

        expect(moved).toBe("ok");
        expect(underOld).toEqual({ outcome: "created" });
        expect(underNew).toEqual({ outcome: "duplicate", tokenId: token.id });
      });

      it("answers conflict for a replace or delete of a token that is gone", async () => {
        const s = await setup();
        const gone = storedToken(s.tenant);

        const replaced = await s.tokens.replace({ ...gone, version: 2 }, 1, auditEntry(gone), {
          now: NOW,
          previous: gone,
        });
        const deleted = await s.tokens.delete(gone, auditEntry(gone), { now: NOW });

        expect([replaced, deleted]).toEqual(["conflict", "conflict"]);
        expect(await s.tokens.get(s.tenant, gone.id)).toBeUndefined();
      });
    });

    describe("batch writes (one transaction)", () => {
      it("writes every entry or none: an id taken names its entry and nothing else is written", async () => {
        const s = await setup();
        const existing = storedToken(s.tenant);
        await create(s, existing);
        const fresh = storedToken(s.tenant);

        const refused = await s.tokens.createAtOnce([staged(fresh), staged({ ...existing })], {}, NOW);
        const written = await s.tokens.createAtOnce([staged(fresh), staged(storedToken(s.tenant))], {}, NOW);

        expect(refused).toEqual({ outcome: "id-taken", index: 1 });
        expect(written).toEqual({ outcome: "written", duplicates: {} });
        expect(await s.tokens.get(s.tenant, fresh.id)).toBeDefined();
      });

      it("writes nothing when a deduplicating entry meets a live claim, and names its owner", async () => {
        const s = await setup();
        const owner = storedToken(s.tenant);
        await create(s, owner, true);
        const other = storedToken(s.tenant);

        const outcome = await s.tokens.createAtOnce(
          [staged(other, true), staged(storedToken(s.tenant, { fingerprint: owner.fingerprint }), true)],
          {},
          NOW,
        );
        const skipping = await s.tokens.createAtOnce(
          [staged(other, true), staged(storedToken(s.tenant, { fingerprint: owner.fingerprint }), true)],
          { 1: owner.id },
          NOW,
        );

        expect(outcome).toEqual({ outcome: "claimed", duplicates: { 1: owner.id } });
        expect(skipping).toEqual({ outcome: "written", duplicates: {} });
        expect(await s.tokens.get(s.tenant, other.id)).toBeDefined();
      });
    });

    describe("reads and pagination", () => {
      /** Five tokens a second apart (newest last) and one expiring at NOW + 30 s. */
      async function seeded() {
        const s = await setup();
        const tokens = Array.from({ length: 5 }, (_, i) =>
          storedToken(s.tenant, {
            created_at: at(i).toISOString(),
            metadata: { Tier: i % 2 ? "Gold" : "x" },
          }),
        );
        for (const token of tokens) await create(s, token);
        const expiring = storedToken(s.tenant, {
          created_at: at(10).toISOString(),
          expires_at: at(30).toISOString(),
        });
        await create(s, expiring);
        return { s, tokens, expiring };
      }

      it("gets many by id in the order asked, once each, leaving out unknown ids", async () => {
        const { s, tokens } = await seeded();
        const [a, b] = tokens as [StoredToken, StoredToken];

        const found = await s.tokens.getMany(s.tenant, [b.id, "no-such-token", a.id, b.id]);

        expect(idsOf(found)).toEqual([b.id, a.id]);
      });

      it("lists newest first with the total, by offset and by cursor", async () => {
        const { s, tokens, expiring } = await seeded();
        const newestFirst = [expiring, ...[...tokens].reverse()].map((t) => t.id);

        const first = await s.tokens.list(s.tenant, { now: NOW }, { page: 1, size: 4 });
        const second = await s.tokens.list(s.tenant, { now: NOW }, { page: 2, size: 4 });
        const byCursor = await s.tokens.list(s.tenant, { now: NOW }, { page: 1, size: 4, start: first.next });

        expect(idsOf(first.items)).toEqual(newestFirst.slice(0, 4));
        expect(first.total).toBe(6);
        expect(first.next).toEqual(expect.any(String));
        expect(idsOf(second.items)).toEqual(newestFirst.slice(4));
        expect(second.next).toBeUndefined();
        expect(idsOf(byCursor.items)).toEqual(newestFirst.slice(4));
        expect(byCursor.total).toBe(6);
        await expect(s.tokens.list(s.tenant, { now: NOW }, { page: 1, size: 4, start: "" })).rejects.toThrow(
          /cursor/,
        );
      });

      it("leaves out of lists and pages a token from its expiry second on (get still finds it)", async () => {
        const { s, expiring } = await seeded();

        const before = await s.tokens.list(s.tenant, { now: at(29) }, { page: 1, size: 10 });
        const atExpiry = await s.tokens.list(s.tenant, { now: at(30) }, { page: 1, size: 10 });
        const paged = await s.tokens.page(s.tenant, { now: at(31) }, 10, undefined);

        expect(idsOf(before.items)).toContain(expiring.id);
        expect(idsOf(atExpiry.items)).not.toContain(expiring.id);
        expect(atExpiry.total).toBe(5);
        expect(idsOf(paged.items)).not.toContain(expiring.id);
        expect((await s.tokens.get(s.tenant, expiring.id))?.id).toBe(expiring.id);
      });

      it("filters by type, container prefix, fingerprint, lowercased metadata and visibility", async () => {
        const { s, tokens } = await seeded();
        const card = storedToken(s.tenant, {
          type: "card_number",
          container: "/pci/high/",
          created_at: at(20).toISOString(),
        });
        await create(s, card);
        const list = async (filter: object) =>
          idsOf((await s.tokens.list(s.tenant, { now: NOW, ...filter }, { page: 1, size: 20 })).items);
        const odd = tokens
          .filter((_, i) => i % 2)
          .map((t) => t.id)
          .reverse();

        expect(await list({ types: ["card_number"] })).toEqual([card.id]);
        expect(await list({ containerPrefix: "/pci/" })).toEqual([card.id]);
        expect(await list({ fingerprint: tokens[2]?.fingerprint })).toEqual([tokens[2]?.id]);
        expect(await list({ metadata: { tier: "gold" } })).toEqual(odd);
        expect(await list({ visibility: [[{ containerPrefix: "/pci/" }]] })).toEqual([card.id]);
        expect(
          await list({ visibility: [[{ idEquals: tokens[0]?.id }, { containerEquals: "/pci/high/" }]] }),
        ).toEqual([card.id, tokens[0]?.id]);
        expect(await list({ visibility: [] })).toEqual([]);
        expect(
          await list({ visibility: [[{ containerPrefix: "/" }], [{ containerPrefix: "/general/" }]] }),
        ).not.toContain(card.id);
      });

      it("walks every listed token once by cursor pages", async () => {
        const { s, tokens, expiring } = await seeded();
        const seen: string[] = [];
        let after: string | undefined;
        for (let page = 0; page < 10; page++) {
          const answer = await s.tokens.page(s.tenant, { now: NOW }, 2, after);
          seen.push(...idsOf(answer.items));
          after = answer.next;
          if (after === undefined) break;
        }

        expect(seen).toEqual([expiring, ...[...tokens].reverse()].map((t) => t.id));
      });
    });

    describe("blind-index lookup", () => {
      it("finds tokens by hash, partition by partition, in pages, and forgets hashes a replace or delete drops", async () => {
        const s = await setup();
        const [a, b, c] = ["a", "b", "c"].map((id) =>
          storedToken(s.tenant, {
            id: `${id}-${randomUUID()}`,
            search_hashes: ["h1", id === "c" ? "h2" : "h1"],
          }),
        ) as [StoredToken, StoredToken, StoredToken];
        for (const token of [a, b, c]) await create(s, token);
        const walk = async (hashes: string[], size: number) => {
          const found: string[] = [];
          let after: string | undefined;
          for (let i = 0; i < 10; i++) {
            const page = await s.tokens.searchEntries(s.tenant, hashes, size, after);
            found.push(...page.entries.map((e) => `${e.hash}:${e.tokenId}`));
            after = page.next;
            if (after === undefined) break;
          }
          return found;
        };

        const all = await walk(["h1", "h2"], 2);
        // Each entry's position goes on just after it (where a page cut short for its size resumes).
        const first = await s.tokens.searchEntries(s.tenant, ["h1", "h2"], 10, undefined);
        const fromSecond = await s.tokens.searchEntries(
          s.tenant,
          ["h1", "h2"],
          10,
          first.entries[1]?.position,
        );
        await s.tokens.replace({ ...a, search_hashes: ["h2"], version: 2 }, 1, auditEntry(a), {
          now: NOW,
          previous: a,
          previousSearchHashes: a.search_hashes,
        });
        await s.tokens.delete(b, auditEntry(b), { now: NOW });
        const after = await walk(["h1", "h2"], 10);

        expect(all).toEqual([`h1:${a.id}`, `h1:${b.id}`, `h1:${c.id}`, `h2:${c.id}`]);
        expect(fromSecond.entries.map((e) => `${e.hash}:${e.tokenId}`)).toEqual([`h1:${c.id}`, `h2:${c.id}`]);
        expect(after).toEqual([`h1:${c.id}`, `h2:${a.id}`, `h2:${c.id}`]);
        expect(await walk(["h1"], 10)).toEqual([`h1:${c.id}`]);
        expect(await s.tokens.searchEntries(`${s.tenant}-other`, ["h1"], 10, undefined)).toEqual({
          entries: [],
        });
      });

      it("removes a stale lookup item only while its token does not hold the hash (checked at the removal)", async () => {
        const s = await setup();
        const v1 = storedToken(s.tenant, { id: `t-${randomUUID()}`, search_hashes: ["h2"] });
        await create(s, v1);
        const v2 = { ...v1, search_hashes: ["h1", "h2"], version: 2 };
        await s.tokens.replace(v2, 1, auditEntry(v1), { now: NOW, previous: v1 });
        // A search that read v1 (no h1) meets h1's item, written since: the removal finds the token holds it.
        await s.tokens.removeStaleSearchEntry(v1, "h1");
        const kept = await s.tokens.searchEntries(s.tenant, ["h1"], 10, undefined);
        expect(kept.entries).toEqual([expect.objectContaining({ hash: "h1", tokenId: v1.id })]);
        // v3 drops h2 without naming it (its item left behind): stale, so it goes.
        await s.tokens.replace({ ...v2, search_hashes: ["h1"], version: 3 }, 2, auditEntry(v1), {
          now: NOW,
          previous: v2,
        });
        await s.tokens.removeStaleSearchEntry(v1, "h2");
        const found = await s.tokens.searchEntries(s.tenant, ["h1", "h2"], 10, undefined);
        expect(found.entries).toEqual([expect.objectContaining({ hash: "h1", tokenId: v1.id })]);
      });

      it("passes over entries of tokens the caller may not see, by container, without counting them", async () => {
        const s = await setup();
        const token = (id: string, container: string) =>
          storedToken(s.tenant, { id: `${id}-${randomUUID()}`, container, search_hashes: ["h1"] });
        const hidden = ["a", "b", "c"].map((id) => token(id, "/pii/"));
        const shown = token("z", "/general/");
        for (const t of [...hidden, shown]) await create(s, t);
        const visible = (ref: { container: string }) => ref.container.startsWith("/general/");
        // One entry asked for: the three hidden ones before it are passed over, not answered or counted.
        const page = await s.tokens.searchEntries(s.tenant, ["h1"], 1, undefined, visible);
        expect(page.entries).toEqual([expect.objectContaining({ hash: "h1", tokenId: shown.id })]);
        expect(page.next).toBeUndefined();
      });
    });
  });
}
