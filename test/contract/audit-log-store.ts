/** What every AuditLogStore promises: run against the in-memory fake and DynamoDB Local (as token-store.ts). */
import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import type { DataKeyStore } from "#shared/ports/data-key-store.ts";
import type { AuditLogStore } from "#shared/ports/stores.ts";
import { auditEntry } from "./token-store.ts";

export function auditLogStoreContract(name: string, store: () => Promise<AuditLogStore>): void {
  describe(`AuditLogStore contract: ${name}`, () => {
    it("lists newest first, by entity and type, between dates, with totals and a cursor", async () => {
      const log = await store();
      const tenant = `contract-${randomUUID()}`;
      const entry = (second: number, entityId: string, entity_type: "token" | "proxy" = "token") =>
        auditEntry(
          { tenant_id: tenant, id: entityId },
          { entity_type, created_at: new Date(Date.UTC(2031, 0, 1, 0, 0, second)).toISOString() },
        );
      const entries = [entry(1, "a"), entry(2, "b", "proxy"), entry(3, "a"), entry(4, "c"), entry(5, "a")];
      await log.append(entries.slice(0, 1));
      await log.append(entries.slice(1));
      await log.append([auditEntry({ tenant_id: `${tenant}-other`, id: "a" })]);
      const ids = (page: { items: { id: string }[] }) => page.items.map((e) => e.id);
      const at = (i: number) => entries[i]?.id;

      const first = await log.list(tenant, {}, { page: 1, size: 2 });
      const next = await log.list(tenant, {}, { page: 1, size: 2, start: first.next });
      const byEntity = await log.list(tenant, { entityId: "a" }, { page: 1, size: 10 });
      const byType = await log.list(tenant, { entityType: "proxy" }, { page: 1, size: 10 });
      const between = await log.list(
        tenant,
        { startDate: entries[1]?.created_at, endDate: `${entries[3]?.created_at}~` },
        { page: 1, size: 10 },
      );

      expect(ids(first)).toEqual([at(4), at(3)]);
      expect(first.total).toBe(5);
      expect(ids(next)).toEqual([at(2), at(1)]);
      expect(next.total).toBe(5);
      expect(ids(byEntity)).toEqual([at(4), at(2), at(0)]);
      expect(byEntity.total).toBe(3);
      expect(ids(byType)).toEqual([at(1)]);
      expect(ids(between)).toEqual([at(3), at(2), at(1)]);
      expect(first.items[0]).toEqual(entries[4]);
    });
  });
}

export function dataKeyStoreContract(name: string, store: () => Promise<DataKeyStore>): void {
  describe(`DataKeyStore contract: ${name}`, () => {
    it("keeps the first key written for a tenant and key id; a racing writer gets that one back", async () => {
      const keys = await store();
      const tenant = `contract-${randomUUID()}`;

      const missing = await keys.get(tenant, "k1");
      const [a, b] = await Promise.all([
        keys.putIfAbsent(tenant, "k1", Buffer.from("first")),
        keys.putIfAbsent(tenant, "k1", Buffer.from("second")),
      ]);
      const stored = await keys.get(tenant, "k1");

      expect(missing).toBeUndefined();
      expect(a.toString()).toBe(b.toString());
      expect(stored?.toString()).toBe(a.toString());
      expect(await keys.get(`${tenant}-other`, "k1")).toBeUndefined();
    });
  });
}
