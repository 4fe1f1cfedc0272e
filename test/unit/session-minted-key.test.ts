/**
 * Review of round 7 (web): a key a member minted while the member's deletion ran survives in the store (written
 * before the member's delete, after the deletion listed keys). Its own lookup refuses it (minted_by member gone);
 * a session that key authorized was looked up by sessionPrincipal, which checked only that the key item existed.
 */
import { describe, expect, it } from "vitest";
import { Authenticator } from "#shared/domain/authentication.ts";
import type { Application } from "#shared/domain/entities.ts";
import { hashKey } from "#shared/ids.ts";
import type { RootKeyVerifier } from "#shared/ports/root-key.ts";
import type { SessionStore } from "#shared/ports/session-store.ts";
import type { ApplicationStore, KeyRecord } from "#shared/ports/stores.ts";
import { handClock } from "#test/support/hand-clock.ts";

const TENANT = "tenant-1";
const app = (id: string, type: Application["type"]): Application => ({
  id,
  tenant_id: TENANT,
  name: id,
  type,
  permissions: ["token:read"],
  rules: [],
  created_at: "2026-01-01T00:00:00Z",
});

describe("a key minted through a member since deleted", () => {
  it("is refused, and so is every session it authorized (one check of a key for both)", async () => {
    const clock = handClock();
    const reader = app("reader", "private");
    const web = app("web", "public");
    const keys = new Map<string, KeyRecord>([
      [hashKey("key_prv_raced"), { tenant_id: TENANT, application_id: "reader", key_id: "raced" }],
      [
        hashKey("key_ses_session"),
        { tenant_id: TENANT, application_id: "web", key_id: "s", session_id: "sess-1" } as KeyRecord,
      ],
    ]);
    const applications = {
      findKey: async (h: string) => keys.get(h),
      get: async (_t: string, id: string) => (id === "reader" ? reader : web),
      getActive: async (_t: string, id: string) => (id === "reader" ? reader : web),
      getKey: async (_t: string, applicationId: string, id: string) => ({
        id,
        application_id: applicationId,
        minted_by: "gone-member",
      }),
      memberActive: async () => false, // the member was deleted
    } as unknown as ApplicationStore;
    const sessions = {
      get: async () => ({
        id: "sess-1",
        tenant_id: TENANT,
        state: "authorized",
        created_by: "web",
        authorized_by: "reader",
        authorized_key_id: "raced",
        permissions: ["token:read"],
        rules: [],
        created_at: clock.now().toISOString(),
        expires_at: new Date(clock.now().getTime() + 86_400_000).toISOString(),
      }),
    } as unknown as SessionStore;
    const auth = new Authenticator(applications, sessions, {} as RootKeyVerifier, clock, 5);
    const use = async (k: string) =>
      (await auth.authenticate(k, { rootAllowed: false })) ? "accepted" : "refused";
    expect(await use("key_prv_raced")).toBe("refused");
    expect(await use("key_ses_session")).toBe("refused"); // was accepted: sessions checked only that the key item existed
  });
});
