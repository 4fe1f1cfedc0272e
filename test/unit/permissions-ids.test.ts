import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { ALLOWED_PERMISSIONS, disallowedPermissions, TOKEN_PERMISSIONS } from "#shared/domain/permissions.ts";
import { digestsEqual, hashKey, newApiKey, uuidv7 } from "#shared/ids.ts";

describe("permissions per application type", () => {
  it("lets public hold only token:create and token:update, private every token:*, management none of them", () => {
    expect(disallowedPermissions("public", ["token:create", "token:update", "token:read"])).toEqual([
      "token:read",
    ]);
    expect(disallowedPermissions("private", [...TOKEN_PERMISSIONS])).toEqual([]);
    expect(disallowedPermissions("private", ["log:read"])).toEqual(["log:read"]);
    expect(disallowedPermissions("management", ["token:use", "proxy:create"])).toEqual(["token:use"]);
    expect(ALLOWED_PERMISSIONS.management).toContain("tenant:invitation:update");
  });
});

describe("ids and keys", () => {
  it("makes UUIDv7s that sort by their time", () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 2 ** 47 }), fc.integer({ min: 1, max: 10 ** 9 }), (t, dt) => {
        const a = uuidv7(new Date(t));
        const b = uuidv7(new Date(t + dt));
        expect(a < b).toBe(true);
        expect(a).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
      }),
    );
  });

  it("makes distinct UUIDv7s within one millisecond", () => {
    const at = new Date("2026-11-23T20:00:00Z");
    const ids = new Set(Array.from({ length: 1_000 }, () => uuidv7(at)));
    expect(ids.size).toBe(1_000);
    for (const id of ids) expect(id.startsWith("01a209fe-7200-7")).toBe(true);
  });

  it("makes distinct, prefixed keys of at least 128 random bits", () => {
    const keys = new Set(Array.from({ length: 200 }, () => newApiKey("private")));
    expect(keys.size).toBe(200);
    for (const key of keys) {
      expect(key).toMatch(/^key_pvt_/);
      expect(Buffer.from(key.slice("key_pvt_".length), "base64url").length * 8).toBeGreaterThanOrEqual(128);
    }
  });

  it("hashes keys irreversibly and compares digests exactly", () => {
    const hash = hashKey("key_pub_abc");
    expect(hash).toMatch(/^[0-9a-f]{64}$/);
    expect(hash).not.toContain("abc");
    expect(digestsEqual(hash, hashKey("key_pub_abc"))).toBe(true);
    expect(digestsEqual(hash, hashKey("key_pub_abd"))).toBe(false);
    expect(digestsEqual(hash, "")).toBe(false);
  });
});
