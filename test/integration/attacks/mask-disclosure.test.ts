import { describe, expect, it } from "vitest";
import { bodyText, client, createTenant } from "#test/support/http.ts";
import { useService } from "#test/support/service.ts";
import { appKey, revealEverything, type TokenBody, VISA } from "#test/support/tokens.ts";

/**
 * Attack: a key that may only update tokens (masked) rewrites what is evaluated on the stored data (the mask,
 * the fingerprint or search expressions) so that the answer, or the fingerprint, gives the data away.
 */
const svc = useService();
const mergePatch = { "content-type": "application/merge-patch+json" };
const card = { number: VISA, expiration_month: 12, expiration_year: 2030, cvc: "737" };

async function setup() {
  const api = client(svc.url);
  const tenant = await createTenant(api, svc.rootKey);
  const pub = await appKey(api, tenant.managementKey, {
    type: "public",
    permissions: ["token:create", "token:update"],
  });
  const maskedUpdater = await appKey(api, tenant.managementKey, {
    type: "private",
    rules: [{ priority: 1, container: "/", transform: "mask", permissions: ["token:update", "token:read"] }],
  });
  const revealer = await appKey(api, tenant.managementKey, { type: "private", rules: revealEverything });
  const token = await api.post<TokenBody>("/tokens", { key: pub, body: { type: "card", data: card } });
  expect(token.status).toBe(201);
  return { api, ...tenant, pub, maskedUpdater, revealer, id: token.body.id };
}

describe("attack: disclosure through PATCH of mask, fingerprint or search expressions", () => {
  it("refuses a public key that sets a revealing mask (403), answering and storing nothing of the data", async () => {
    const { api, pub, revealer, id } = await setup();

    const res = await api.patch<TokenBody>(`/tokens/${id}`, {
      key: pub,
      headers: mergePatch,
      body: { mask: { number: "{{ data.number }}", cvc: "{{ data.cvc }}" } },
    });
    const read = await api.get<TokenBody>(`/tokens/${id}`, { key: revealer });

    expect(res.status).toBe(403);
    expect(res.headers.get("content-type")).toContain("application/problem+json");
    expect(JSON.stringify(res.body)).not.toContain(VISA);
    expect(bodyText(res.body)).not.toContain("737");
    expect(read.body.mask).toEqual(
      expect.objectContaining({ number: expect.stringContaining("reveal_last: 4") }),
    );
  });

  it.each([
    ["mask", { mask: "{{ data.number }}" }],
    ["mask removal", { mask: null }],
    ["fingerprint_expression", { fingerprint_expression: "{{ data.number | slice: 0, 1 }}" }],
    ["search_indexes", { search_indexes: ["{{ data.number | slice: 0, 1 }}"] }],
  ])(
    "refuses a %s change without reveal-level token:update (403), also for a masked rule",
    async (_, body) => {
      const { api, pub, maskedUpdater, id } = await setup();

      const results = await Promise.all(
        [pub, maskedUpdater].map((key) =>
          api.patch<TokenBody>(`/tokens/${id}`, { key, headers: mergePatch, body }),
        ),
      );

      expect(results.map((r) => r.status)).toEqual([403, 403]);
      for (const r of results) expect(JSON.stringify(r.body)).not.toContain(VISA);
    },
  );

  it("needs reveal on the target container too when the token moves", async () => {
    const { api, managementKey, id } = await setup();
    const mover = await appKey(api, managementKey, {
      type: "private",
      rules: [
        { priority: 1, container: "/pci/", transform: "reveal", permissions: ["token:update"] },
        { priority: 2, container: "/general/", transform: "mask", permissions: ["token:update"] },
      ],
    });

    const res = await api.patch(`/tokens/${id}`, {
      key: mover,
      headers: mergePatch,
      body: { containers: ["/general/"], mask: "{{ data.number }}" },
    });
    const plainMove = await api.patch<TokenBody>(`/tokens/${id}`, {
      key: mover,
      headers: mergePatch,
      body: { containers: ["/general/"] },
    });

    expect(res.status).toBe(403);
    // Moving alone takes reveal on both containers too (a move changes who may see the data: container-move).
    expect(plainMove.status).toBe(403);
    expect(JSON.stringify(plainMove.body)).not.toContain(VISA);
  });

  it("lets a reveal-level updater change the mask, and audits its revealing answer as a read", async () => {
    const { api, revealer, managementKey, pub, id } = await setup();

    const res = await api.patch<TokenBody>(`/tokens/${id}`, {
      key: revealer,
      headers: mergePatch,
      body: { mask: { number: "{{ data.number | reveal_last: 2 }}" } },
    });
    const masked = await api.patch<TokenBody>(`/tokens/${id}`, {
      key: pub,
      headers: mergePatch,
      body: { metadata: { k: "v" } },
    });
    const logs = await api.get<{ data: { operation: string; message: string }[] }>(`/logs?entity_id=${id}`, {
      key: managementKey,
    });

    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({ number: VISA });
    expect(res.body.mask).toMatchObject({ number: "{{ data.number | reveal_last: 2 }}" });
    expect(masked.body.data).toMatchObject({ number: "XXXXXXXXXXXXXX42" });
    expect(logs.body.data.map((l) => l.operation)).toEqual(["read", "update", "read", "update", "create"]);
  });
});
