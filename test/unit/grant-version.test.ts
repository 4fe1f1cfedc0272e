import { describe, expect, it } from "vitest";
import type { Application, Principal } from "#shared/domain/entities.ts";
import { grantVersionOf } from "#shared/domain/grant-version.ts";

const application: Application = {
  id: "app-1",
  tenant_id: "t-1",
  name: "checkout",
  type: "private",
  permissions: ["token:read"],
  rules: [{ priority: 1, container: "/", transform: "reveal", permissions: ["token:create"] }],
  created_at: "2026-01-01T00:00:00.000Z",
};
const byKey = (app: Application): Principal => ({
  kind: "application",
  tenantId: "t-1",
  keyId: "k-1",
  application: app,
});
const bySession = (authorized: boolean, app = application): Principal => ({
  kind: "session",
  tenantId: "t-1",
  keyId: "s-1",
  application: app,
  session: {
    id: "s-1",
    authorized,
    permissions: ["token:read"],
    rules: [],
    expires_at: "2026-01-01T01:00:00.000Z",
  },
  creator: { id: app.id },
});

describe("grantVersionOf", () => {
  it("has none for callers without a tenant grant", () => {
    expect(grantVersionOf(undefined)).toBeUndefined();
    expect(grantVersionOf({ kind: "root" })).toBeUndefined();
  });

  it("changes with permissions, rules and type, not with names, timestamps or key order", () => {
    const base = grantVersionOf(byKey(application));
    const reordered = {
      ...application,
      rules: [
        { transform: "reveal" as const, permissions: ["token:create" as const], container: "/", priority: 1 },
      ],
    };

    expect(
      grantVersionOf(byKey({ ...application, name: "renamed", modified_at: "2026-02-01T00:00:00Z" })),
    ).toBe(base);
    expect(grantVersionOf(byKey(reordered))).toBe(base);
    expect(grantVersionOf(byKey({ ...application, permissions: [] }))).not.toBe(base);
    expect(
      grantVersionOf(
        byKey({
          ...application,
          rules: [{ priority: 1, container: "/", transform: "redact", permissions: ["token:create"] }],
        }),
      ),
    ).not.toBe(base);
    expect(grantVersionOf(byKey({ ...application, type: "public" }))).not.toBe(base);
  });

  it("covers a session's own grant, its authorization and the application behind it", () => {
    const authorized = grantVersionOf(bySession(true));

    expect(grantVersionOf(bySession(false))).not.toBe(authorized);
    expect(grantVersionOf(bySession(true, { ...application, rules: [] }))).not.toBe(authorized);
    expect(authorized).not.toBe(grantVersionOf(byKey(application)));
  });
});
