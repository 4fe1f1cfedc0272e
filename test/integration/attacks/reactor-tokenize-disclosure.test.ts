import { describe, expect, it } from "vitest";
import { bodyText, client, createTenant } from "#test/support/http.ts";
import { formulaReactor } from "#test/support/reactors.ts";
import { useService } from "#test/support/service.ts";
import { type TokenBody, VISA } from "#test/support/tokens.ts";

/**
 * Attack: a caller who may only *use* tokens (their values go into a formula) reads them through a reactor
 * whose formula tokenizes: the `tokens` answer was presented with the reactor's application's rights (here:
 * reveal everything), not the caller's. (a) deduplication hands back an existing card, cvc included; (b) the
 * caller detokenizes a card it may use but not read into args, and the formula tokenizes it again.
 */
const svc = useService();

async function setup(code: string, callerRules: unknown[]) {
  const api = client(svc.url);
  const { managementKey } = await createTenant(api, svc.rootKey);
  const everything = ["token:create", "token:read", "token:use"];
  const vault = await api.post<{ id: string; key: string }>("/applications", {
    key: managementKey,
    body: {
      name: "vault",
      type: "private",
      permissions: everything,
      rules: [{ priority: 1, container: "/", transform: "reveal", permissions: everything }],
    },
  });
  const caller = await api.post<{ key: string }>("/applications", {
    key: managementKey,
    body: { name: "caller", type: "private", permissions: ["token:use"], rules: callerRules },
  });
  const reactorId = await formulaReactor(api, managementKey, {
    formula: { name: "Tokenizer", code },
    name: "t",
    applicationId: vault.body.id,
  });
  const card = await api.post<TokenBody>("/tokens", {
    key: vault.body.key,
    body: { type: "card", data: { number: VISA, expiration_month: 7, expiration_year: 2031, cvc: "987" } },
  });
  const react = (args: unknown) =>
    api.post<{ tokens?: Record<string, TokenBody> }>(`/reactors/${reactorId}/react`, {
      key: caller.body.key,
      body: { args },
    });
  return { react, cardId: card.body.id };
}

describe("attack: reading token data through a reactor's tokenize answer", () => {
  it("does not hand a deduplicated existing card to a caller who may not read it", async () => {
    const { react } = await setup(
      `module.exports = async (req) => ({ tokenize: { card: { type: "card", deduplicate_token: true,
        data: { number: req.args.number, expiration_month: 7, expiration_year: 2031 } } } });`,
      [{ priority: 1, container: "/unrelated/", transform: "redact", permissions: ["token:use"] }],
    );

    const res = await react({ number: VISA });

    expect(bodyText(res.body)).not.toContain(VISA);
    expect(bodyText(res.body)).not.toContain("987");
  });

  it("answers a token the formula created with no more than the caller may read", async () => {
    const { react, cardId } = await setup(
      `module.exports = async (req) => ({ tokenize: { copy: { type: "token", data: req.args.card } } });`,
      [{ priority: 1, container: "/pci/", transform: "reveal", permissions: ["token:use"] }],
    );

    const res = await react({ card: `{{ ${cardId} }}` });

    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.tokens?.copy?.id).toEqual(expect.any(String));
    expect(res.body.tokens?.copy?.data).toBeUndefined();
    expect(bodyText(res.body)).not.toContain(VISA);
  });
});
