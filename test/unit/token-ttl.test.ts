import { describe, expect, it } from "vitest";
import { tokenItem } from "#shared/adapters/dynamodb/token-items.ts";
import { SWEEP_LOOKBACK_HOURS } from "#shared/domain/tokens/sweep.ts";
import type { StoredToken } from "#shared/domain/tokens/token.ts";

const token: StoredToken = {
  id: "t-1",
  tenant_id: "tenant-1",
  type: "token",
  container: "/general/low/",
  sealed_data: "v1.k1.iv.tag.body",
  fingerprint: "fp",
  fingerprint_expression: "{{ data }}",
  created_at: "2026-11-26T10:00:00.000Z",
  expires_at: "2026-11-26T12:00:00.000Z",
  version: 1,
};

describe("an expiring token's DynamoDB TTL", () => {
  it("comes only after the sweep can no longer reach it (a TTL deletion counts no key use down)", () => {
    const item = tokenItem(token);
    const expires = Date.parse(token.expires_at as string) / 1000;
    expect(item.expires_epoch).toBe(expires);
    // The sweep looks back SWEEP_LOOKBACK_HOURS: until then it deletes the token and its key count together.
    expect(Number(item.ttl)).toBeGreaterThan(expires + SWEEP_LOOKBACK_HOURS * 3600);
  });

  it("is absent on a token that does not expire", () => {
    const { expires_at: _, ...lasting } = token;
    expect(tokenItem(lasting)).not.toHaveProperty("ttl");
  });
});
