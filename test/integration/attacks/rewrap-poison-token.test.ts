import { describe, expect, it } from "vitest";
import { client, createTenant } from "#test/support/http.ts";
import { useService } from "#test/support/service.ts";
import { ALL_TOKEN_PERMISSIONS, appKey, revealEverything, VISA } from "#test/support/tokens.ts";

/**
 * Review (key custody): a rewrap re-renders each token's search indexes on its data as it opens now. A card's cvc
 * is readable for one hour only, so an index whose render needs the cvc (here as an hmac secret) rendered at the
 * create and fails at the rewrap. One such token, planted with a public key, failed its whole page every time:
 * the job never finished, no token after it was re-sealed, no HMAC version was ever retired (rotations then 409),
 * and no old data-key version could be destroyed.
 */
const svc = useService();

interface Job {
  id: string;
  status: string;
  total: number;
  done: number;
  skipped: number;
}

describe("attack: a token that no longer renders poisons every rewrap", () => {
  it("the rewrap finishes, leaves that token (skipped, under its keys) and re-seals the others", async () => {
    const api = client(svc.url);
    const tenant = await createTenant(api, svc.rootKey);
    const mgt = tenant.managementKey;
    const owner = await appKey(api, mgt, {
      type: "private",
      permissions: ALL_TOKEN_PERMISSIONS,
      rules: revealEverything,
    });
    const pub = await appKey(api, mgt, { type: "public", permissions: ["token:create"] });

    for (let i = 0; i < 3; i++) {
      const plain = await api.post("/tokens", {
        key: owner,
        body: { type: "token", data: `value ${i}`, search_indexes: ["{{ data }}"] },
      });
      expect(plain.status).toBe(201);
    }
    // The poison: a public key may create tokens with search indexes.
    const poison = await api.post<{ id: string }>("/tokens", {
      key: pub,
      body: {
        type: "card",
        data: { number: VISA, expiration_month: 12, expiration_year: 2031, cvc: "123" },
        search_indexes: ["{{ data.number | hmac: data.cvc }}"],
      },
    });
    expect(poison.status, JSON.stringify(poison.body)).toBe(201);

    // The cvc's hour passes; the tenant rotates its keys and re-seals everything.
    const moved = await api.post("/_test/clock", { key: svc.rootKey, body: { advance_seconds: 3700 } });
    expect(moved.status).toBe(200);
    expect((await api.post("/tenants/self/keys/rotate", { key: mgt })).status).toBe(200);
    const started = await api.post<Job>("/tenants/self/keys/rewrap", { key: mgt });
    expect(started.status).toBe(202);

    let job: Job = started.body;
    for (let i = 0; i < 100 && job.status === "running"; i++) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      job = (await api.get<Job>(`/tenants/self/keys/rewrap/${started.body.id}`, { key: mgt })).body;
    }
    expect(job).toMatchObject({ status: "succeeded", done: 4, skipped: 1 });

    // The other tokens are under the new keys; the poisoned one still opens under its own.
    const keys = await api.get<{ current: number; versions: { version: number; tokens: number | null }[] }>(
      "/tenants/self/keys",
      { key: mgt },
    );
    const current = keys.body.versions.find((v) => v.version === keys.body.current);
    expect(current?.tokens).toBe(3);
    const read = await api.get<{ data: { number: string } }>(`/tokens/${poison.body.id}`, { key: owner });
    expect(read.status).toBe(200);
    expect(read.body.data.number).toBe(VISA);
  });
});
