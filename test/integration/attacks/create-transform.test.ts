import { describe, expect, it } from "vitest";
import { bodyText, client, createTenant } from "#test/support/http.ts";
import { useService } from "#test/support/service.ts";
import { appKey, type TokenBody, VISA } from "#test/support/tokens.ts";

/**
 * Attack: the create answer ignores the caller's rule for token:create, so a key whose rule redacts (e.g. a
 * reactor's application, whose tokenize output is answered to its caller) still gets masked data back.
 */
const svc = useService();
const card = { number: VISA, expiration_month: 12, expiration_year: 2030 };

async function keyWith(transform: "redact" | "mask" | "reveal") {
  const api = client(svc.url);
  const tenant = await createTenant(api, svc.rootKey);
  const key = await appKey(api, tenant.managementKey, {
    type: "private",
    rules: [{ priority: 1, container: "/", transform, permissions: ["token:create"] }],
  });
  return { api, key, managementKey: tenant.managementKey };
}

describe("attack: create answers past the caller's token:create rule", () => {
  it("answers no data to a rule that redacts on token:create", async () => {
    const { api, key } = await keyWith("redact");

    const res = await api.post<TokenBody>("/tokens", { key, body: { type: "card", data: card } });

    expect(res.status).toBe(201);
    expect(res.body.data).toBeUndefined();
    expect(bodyText(res.body)).not.toContain("4242");
  });

  it("answers the data masked to a masking rule, and revealed to a revealing one", async () => {
    const masking = await keyWith("mask");
    const revealing = await keyWith("reveal");

    const masked = await masking.api.post<TokenBody>("/tokens", {
      key: masking.key,
      body: { type: "card", data: card },
    });
    const revealed = await revealing.api.post<TokenBody>("/tokens", {
      key: revealing.key,
      body: { type: "token", data: { secret: "s3" } },
    });

    expect(masked.body.data).toEqual({ ...card, number: "XXXXXXXXXXXX4242" });
    expect(revealed.body.data).toEqual({ secret: "s3" });
  });

  it("keeps the implicit mask for a key without rules", async () => {
    const api = client(svc.url);
    const { managementKey } = await createTenant(api, svc.rootKey);
    const pub = await appKey(api, managementKey, { type: "public", permissions: ["token:create"] });

    const res = await api.post<TokenBody>("/tokens", { key: pub, body: { type: "card", data: card } });

    expect(res.body.data).toEqual({ ...card, number: "XXXXXXXXXXXX4242" });
  });

  it("applies the rule to tokens a reactor's formula tokenizes, answered to the reactor's caller", async () => {
    const { api, managementKey } = await keyWith("mask");
    const app = await api.post<{ id: string; key: string }>("/applications", {
      key: managementKey,
      body: {
        name: "tokenizer",
        type: "private",
        rules: [
          { priority: 1, container: "/pci/", transform: "redact", permissions: ["token:create"] },
          { priority: 2, container: "/", transform: "reveal", permissions: ["token:use"] },
        ],
      },
    });
    const formula = await api.post<{ id: string }>("/reactor-formulas", {
      key: managementKey,
      body: {
        name: "Tokenize",
        code: `module.exports = async () => ({ tokenize: { card: { type: "card", data: { number: "${VISA}" } } } });`,
        configuration: [],
        request_parameters: [],
      },
    });
    const reactor = await api.post<{ id: string }>("/reactors", {
      key: managementKey,
      body: {
        name: "t",
        formula: { id: formula.body.id },
        configuration: {},
        application: { id: app.body.id },
      },
    });

    const res = await api.post(`/reactors/${reactor.body.id}/react`, {
      key: app.body.key,
      body: { args: {} },
    });

    expect(res.status).toBe(200);
    expect(bodyText(res.body)).not.toContain("4242");
  });
});
