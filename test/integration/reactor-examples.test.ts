/**
 * The formulas of docs/reactors.md ("Examples"), read from the docs and run as written against a local partner:
 * each is in the hosted vault's documented style (node-fetch, axios with retries, the reactor-errors SDK,
 * req.svc).
 */
import { readFileSync } from "node:fs";
import type http from "node:http";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { REPO_ROOT } from "#lib/bundling.ts";
import type { HttpResponse } from "#test/support/http.ts";
import { useLocalServer } from "#test/support/local-server.ts";
import { createReactor } from "#test/support/reactors.ts";
import { useService } from "#test/support/service.ts";
import { appKey, type TokenBody, VISA } from "#test/support/tokens.ts";

const svc = useService({ allowPrivateDestinations: true });

const DECLINED = "4000000000000002";
const PARTNER_KEY = "sk_test_partner";

/** Requests the partner got (bodies included: it is the destination the card data is meant for). */
const received: { method: string; path: string; body: string; authorization?: string }[] = [];
/** Failures left on the flaky payout endpoint before it accepts. */
let payoutFailures = 0;

function answer(res: http.ServerResponse, status: number, body: unknown, type = "application/json") {
  res.writeHead(status, { "content-type": type }).end(typeof body === "string" ? body : JSON.stringify(body));
}

const partner = useLocalServer((req, res, raw) => {
  const body = raw.toString("utf8");
  const path = req.url ?? "/";
  received.push({ method: req.method ?? "", path, body, authorization: req.headers.authorization });
  if (path === "/exports/cards.csv")
    return answer(res, 200, `name,number\nAda,${VISA}\nGrace,5555555555554444\n`, "text/csv");
  if (req.headers.authorization !== `Bearer ${PARTNER_KEY}`)
    return answer(res, 401, { error: { type: "authentication_error", message: "Invalid API key" } });
  const json = body ? (JSON.parse(body) as Record<string, unknown>) : {};
  if (path === "/v1/cards")
    return answer(res, 201, { id: "card_1", last4: String(json.number).slice(-4), brand: "visa" });
  if (path === "/v1/payouts") {
    if (payoutFailures > 0) {
      payoutFailures -= 1;
      return answer(res, 503, { error: { message: "try again" } });
    }
    return answer(res, 201, { id: "po_1", amount: json.amount });
  }
  if (path === "/v1/charges") {
    if (json.number === DECLINED)
      return answer(res, 402, {
        error: { type: "card_error", code: "card_declined", message: "Your card was declined." },
      });
    if (typeof json.amount !== "number")
      return answer(res, 400, {
        error: { type: "invalid_request_error", message: "amount is required" },
      });
    return answer(res, 200, { id: "ch_1", status: "succeeded" });
  }
  answer(res, 404, { error: { message: "no such endpoint" } });
});

/** The code of the docs' example whose block starts with `// Example: <name>`. */
function example(name: string): string {
  const docs = readFileSync(join(REPO_ROOT, "docs", "reactors.md"), "utf8");
  const block = new RegExp(`\`\`\`js\n// Example: ${name}\n([\\s\\S]*?)\`\`\``).exec(docs)?.[1];
  if (block === undefined) throw new Error(`docs/reactors.md has no example "${name}"`);
  return block;
}
const CALL_A_THIRD_PARTY = example("call a third party");
const AXIOS_WITH_RETRIES = example("axios with retries");
const PAYMENT_PROVIDER = example("payment provider");
const IMPORT_A_FILE = example("import a file");

const configuration = [
  { name: "BASE_URL", type: "string" },
  { name: "API_KEY", type: "string" },
];

/** A tenant and a reactor running `code` as an application that may create and use tokens. */
async function reactorRunning(
  code: string,
  parameters: { name: string; type: "string" | "number"; optional?: boolean }[],
  apiKey = PARTNER_KEY,
) {
  const { api, tenant, app, reactorId } = await createReactor(svc, {
    formula: { name: "example", code, configuration, request_parameters: parameters },
    permissions: ["token:create", "token:read", "token:use"],
    configuration: { BASE_URL: partner.url, API_KEY: apiKey },
  });
  const pub = await appKey(api, tenant.managementKey, { type: "public", permissions: ["token:create"] });
  const card = async (number: string) =>
    (
      await api.post<TokenBody>("/tokens", {
        key: pub,
        body: { type: "card", data: { number, expiration_month: 12, expiration_year: 2031 } },
      })
    ).body.id;
  const react = (args: Record<string, unknown>): Promise<HttpResponse<Record<string, unknown>>> =>
    api.post(`/reactors/${reactorId}/react`, { key: app.key, body: { args } });
  return { api, user: app.key, card, react };
}

describe("docs/reactors.md examples, against a local partner", () => {
  it("calls a third party with node-fetch, sending the detokenized card and answering what it said", async () => {
    const { card, react } = await reactorRunning(CALL_A_THIRD_PARTY, [
      { name: "card.number", type: "string" },
      { name: "card.expiration_month", type: "number" },
    ]);
    const token = await card(VISA);

    const res = await react({ card: `{{ ${token} }}` });

    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toEqual({ raw: { id: "card_1", last4: "4242", brand: "visa" } });
    expect(received.find((r) => r.path === "/v1/cards")?.body).toContain(VISA);
  });

  it("posts with axios and retries a failing partner via setTimeout", async () => {
    const { react } = await reactorRunning(AXIOS_WITH_RETRIES, [
      { name: "account", type: "string" },
      { name: "amount", type: "number" },
    ]);
    payoutFailures = 2;

    const res = await react({ account: "acct_1", amount: 1200 });

    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toEqual({ raw: { payout: "po_1", attempts: 3 } });
    payoutFailures = 5;
    const gaveUp = await react({ account: "acct_1", amount: 1200 });
    payoutFailures = 0;
    expect(gaveUp.status).toBe(500);
    expect(gaveUp.body).toMatchObject({
      title: "ReactorRuntimeError",
      errors: { error: ["Request failed with status code 503"] },
    });
  });

  it("maps a payment provider's errors to typed errors", async () => {
    const { card, react } = await reactorRunning(PAYMENT_PROVIDER, [
      { name: "card.number", type: "string" },
      { name: "amount", type: "number", optional: true },
    ]);
    const good = await card(VISA);
    const declined = await card(DECLINED);
    const wrongKey = await reactorRunning(
      PAYMENT_PROVIDER,
      [{ name: "card.number", type: "string" }],
      "sk_wrong",
    );

    const charged = await react({ card: `{{ ${good} }}`, amount: 500 });
    const refused = await react({ card: `{{ ${declined} }}`, amount: 500 });
    const noAmount = await react({ card: `{{ ${good} }}` });
    const unauthenticated = await wrongKey.react({ card: `{{ ${await wrongKey.card(VISA)} }}` });

    expect(charged.body).toEqual({ raw: { charge: "ch_1", status: "succeeded" } });
    expect(refused.status).toBe(402);
    expect(refused.body).toMatchObject({
      title: "InvalidPaymentMethodError",
      detail: "Invalid Payment Method",
      errors: { decline_code: ["card_declined"] },
    });
    expect(noAmount.status).toBe(400);
    expect(noAmount.body).toMatchObject({
      detail: "amount is required",
      errors: { error: ["amount is required"] },
    });
    expect(unauthenticated.status).toBe(401);
    expect(unauthenticated.body).toMatchObject({
      title: "AuthenticationError",
      detail: "Authentication Failed",
    });
  });

  it("imports a file: reads a CSV from the partner and tokenizes each row through req.svc", async () => {
    const { api, user, react } = await reactorRunning(IMPORT_A_FILE, [{ name: "file_url", type: "string" }]);

    const res = await react({ file_url: `${partner.url}/exports/cards.csv` });
    const imported = (res.body.raw as { imported: { name: string; token: string }[] }).imported;
    const first = await api.get<TokenBody>(`/tokens/${imported[0]?.token}`, { key: user });

    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(imported.map((row) => row.name)).toEqual(["Ada", "Grace"]);
    expect(JSON.stringify(res.body)).not.toContain(VISA);
    expect(first.status).toBe(200);
    expect(first.body.type).toBe("card_number");
  });
});
