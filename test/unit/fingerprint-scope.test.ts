import { describe, expect, it } from "vitest";
import type { Sealer } from "#shared/domain/crypto/sealer.ts";
import { fingerprintOf } from "#shared/domain/tokens/sealing.ts";
import { typeSpec } from "#shared/domain/tokens/types.ts";

/** Records the scope each fingerprint is keyed with (token hashes: the versioned HMAC, keys/key-refs.ts). */
const sealer = {
  tokenHash: async (tenantId: string, scope: string, value: string) => `${tenantId}|${scope}|${value}`,
} as unknown as Sealer;

describe("fingerprintOf", () => {
  it("keeps the plain type scope for the type's default expression (existing fingerprints stay valid)", async () => {
    const fp = await fingerprintOf({ sealer }, "t1", "bank", typeSpec("bank").fingerprint, "021000021:1");
    expect(fp).toBe("t1|bank|021000021:1");
  });

  it("scopes a custom expression by its hash: same rendering, different expressions, never equal", async () => {
    const a = await fingerprintOf({ sealer }, "t1", "bank", "{{ data.account_number }}", "1");
    const b = await fingerprintOf({ sealer }, "t1", "bank", "{% if data %}1{% endif %}", "1");
    const plain = await fingerprintOf({ sealer }, "t1", "bank", typeSpec("bank").fingerprint, "1");
    expect(a).toMatch(/^t1\|bank#x:[0-9a-f]{64}\|1$/);
    expect(new Set([a, b, plain]).size).toBe(3);
    expect(await fingerprintOf({ sealer }, "t1", "bank", "{{ data.account_number }}", "1")).toBe(a);
  });
});
