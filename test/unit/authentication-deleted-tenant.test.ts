import { describe, expect, it } from "vitest";
import { Authenticator } from "#shared/domain/authentication.ts";
import { DeletedTenants } from "#shared/domain/deleted-tenants.ts";
import type { Application } from "#shared/domain/entities.ts";
import { hashKey } from "#shared/ids.ts";
import type { RootKeyVerifier } from "#shared/ports/root-key.ts";
import type { SessionStore } from "#shared/ports/session-store.ts";
import type { ApplicationStore, KeyRecord } from "#shared/ports/stores.ts";
import { handClock } from "#test/support/hand-clock.ts";

const TENANT = "tenant-1";
const application: Application = {
  id: "app-1",
  tenant_id: TENANT,
  name: "back end",
  type: "private",
  permissions: ["token:read"],
  rules: [],
  created_at: "2026-01-01T00:00:00Z",
};

/**
 * A process that did not delete the tenant: the deletion reaches it only through the store. Two keys of one
 * application; the tenant's live answer was cached by another path (the keyring) just before the deletion.
 */
function otherProcess() {
  const clock = handClock();
  const tombstone = { deleted: false };
  const deletedTenants = new DeletedTenants({ isDeleted: async () => tombstone.deleted }, clock, 5);
  const keys = new Map<string, KeyRecord>(
    ["key-1", "key-2"].map((key) => [
      hashKey(key),
      { tenant_id: TENANT, application_id: application.id, key_id: key },
    ]),
  );
  // Only the lookups an application key's authentication makes; the rest of each port is never called here.
  const applications = {
    findKey: async (hash: string) => keys.get(hash),
    get: async () => application,
    getActive: async () => application,
    getKey: async (_tenant: string, applicationId: string, id: string) => ({
      id,
      application_id: applicationId,
    }),
  } as unknown as ApplicationStore;
  const authenticator = new Authenticator(
    applications,
    {} as SessionStore,
    {} as RootKeyVerifier,
    clock,
    5,
    deletedTenants,
  );
  const authenticate = async (key: string) =>
    (await authenticator.authenticate(key, { rootAllowed: false })) ? "accepted" : "refused";
  // As the middleware asks (middleware/authenticate.ts): the cache's answer in this turn, else a lookup.
  const cachedFirst = async (key: string) =>
    (authenticator.cached(key) ?? (await authenticator.authenticate(key, { rootAllowed: false })))
      ? "accepted"
      : "refused";
  return { clock, tombstone, deletedTenants, authenticator, authenticate, cachedFirst };
}

describe.each([
  ["authenticate", (p: ReturnType<typeof otherProcess>) => p.authenticate],
  ["the middleware's cached answer first", (p: ReturnType<typeof otherProcess>) => p.cachedFirst],
])("Authenticator: a tenant deleted in another process (%s)", (_name, asked) => {
  const otherProcessAsking = () => {
    const process = otherProcess();
    return { ...process, use: asked(process) };
  };

  it("refuses a key first used after the deletion, even while the tenant's live answer is still cached", async () => {
    const { clock, tombstone, deletedTenants, use } = otherProcessAsking();
    expect(await deletedTenants.isDeleted(TENANT)).toBe(false); // cached live at t = 0 (the keyring's read)
    clock.advance(100);
    tombstone.deleted = true; // deleted elsewhere at t = 0.1 s
    clock.advance(4_800); // t = 4.9 s: the live answer has 0.1 s to go

    expect(await use("key-1")).toBe("refused");
  });

  it("stops a key cached before the deletion within SVC_AUTH_CACHE_SECONDS", async () => {
    const { clock, tombstone, use } = otherProcessAsking();
    expect(await use("key-2")).toBe("accepted"); // its principal cached at t = 0
    clock.advance(100);
    tombstone.deleted = true;
    clock.advance(4_900); // t = 5.0 s

    expect(await use("key-2")).toBe("refused");
  });

  it("once a lookup finds the tenant deleted, its keys cached in this process stop at once", async () => {
    const { clock, tombstone, use } = otherProcessAsking();
    expect(await use("key-2")).toBe("accepted");
    clock.advance(100);
    tombstone.deleted = true;
    clock.advance(1_000);

    expect(await use("key-1")).toBe("refused");
    expect(await use("key-2")).toBe("refused");
  });
});

describe("Authenticator.cached", () => {
  it("answers only what a lookup stored, for its time, and nothing for a key it never saw", async () => {
    const { clock, authenticator } = otherProcess();
    expect(authenticator.cached("key-1")).toBeUndefined();
    expect(authenticator.cached(undefined)).toBeUndefined();
    expect(await authenticator.authenticate("key-1", { rootAllowed: false })).toBeDefined();

    expect(authenticator.cached("key-1")).toMatchObject({ kind: "application", tenantId: TENANT });
    expect(authenticator.cached("key-2")).toBeUndefined();
    clock.advance(5_000); // SVC_AUTH_CACHE_SECONDS = 5
    expect(authenticator.cached("key-1")).toBeUndefined();
  });

  it("stops answering a key once a fresh authentication evicted it", async () => {
    const { authenticator } = otherProcess();
    await authenticator.authenticate("key-1", { rootAllowed: false });
    const evicting = authenticator.authenticate("key-1", { rootAllowed: false, fresh: true });
    expect(authenticator.cached("key-1")).toBeUndefined();
    await evicting;
    expect(authenticator.cached("key-1")).toBeDefined();
  });
});
