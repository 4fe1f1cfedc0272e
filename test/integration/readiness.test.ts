import { describe, expect, it } from "vitest";
import { HEALTH_CACHE_MS } from "#shared/domain/store-health.ts";
import type { KeyWrapper } from "#shared/ports/key-wrapper.ts";
import { client } from "#test/support/http.ts";
import { useService } from "#test/support/service.ts";

/**
 * GET /healthz is readiness: the store answers AND the keys work. Here the master key's wrapper is made to
 * fail as a disabled or deleted KMS key fails (every wrap and unwrap refused), under a running service.
 */
const KMS_ERROR = "KMS key arn:aws:kms:us-east-1:123456789012:key/0b1c-secret-looking-id is disabled";
let keysBroken = false;
const breakable = (inner: KeyWrapper): KeyWrapper => ({
  generateDataKey: async (context) => {
    if (keysBroken) throw Object.assign(new Error(KMS_ERROR), { name: "DisabledException" });
    return inner.generateDataKey(context);
  },
  unwrap: async (wrapped, context) => {
    if (keysBroken) throw Object.assign(new Error(KMS_ERROR), { name: "DisabledException" });
    return inner.unwrap(wrapped, context);
  },
});
const svc = useService({ wrapKeys: breakable });

/** The next probe, past the cached answer (about a second of the service clock). */
async function health() {
  svc.service.deps.testClock?.advance(HEALTH_CACHE_MS / 1000 + 1);
  return client(svc.url).get<Record<string, unknown>>("/healthz");
}

describe("/healthz readiness", () => {
  it("answers 200 with each part of the readiness check while the store answers and the keys work", async () => {
    const res = await health();
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ status: "ok", checks: { store: "ok", keys: "ok" } });
  });

  it("answers 503 problem+json naming the keys, and nothing of the key or its error, while the master key fails", async () => {
    keysBroken = true;
    const broken = await health();
    keysBroken = false;
    const recovered = await health();

    expect(broken.status).toBe(503);
    expect(broken.headers.get("content-type")).toContain("application/problem+json");
    expect(Number(broken.headers.get("retry-after"))).toBeGreaterThan(0);
    expect(broken.body).toMatchObject({
      status: 503,
      errors: { keys: ["The master key cannot wrap or unwrap a data key."] },
    });
    expect(Object.keys(broken.body.errors as object)).toEqual(["keys"]);
    const text = JSON.stringify(broken.body);
    expect(text).not.toContain("arn:aws:kms");
    expect(text).not.toContain("secret-looking");
    expect(text).not.toContain("DisabledException");
    expect(recovered.status).toBe(200);
  });

  it("keeps a probe's answer for about a second of the service clock", async () => {
    expect((await health()).status).toBe(200);
    keysBroken = true;
    // The same moment of the service clock: the answer of the probe just made stands.
    const cached = await client(svc.url).get("/healthz");
    const probedAgain = await health();
    keysBroken = false;

    expect(cached.status).toBe(200);
    expect(probedAgain.status).toBe(503);
    expect((await health()).status).toBe(200);
  });
});
