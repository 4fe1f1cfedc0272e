/**
 * The fuzz's fixtures, made through the public HTTP API: for a tenant, applications of every type, a session,
 * tokens, a transaction, a proxy, a formula, a reactor and invitations (with codes to accept, from the outbox).
 * A fresh pair of tenants per batch, so that what one batch deleted or revoked does not blunt the next.
 */
import { createLocalCustomerKey } from "#shared/adapters/local/local-customer-keys.ts";
import { invitationCodeIn, newestMessageTo } from "#shared/adapters/local/outbox-mailer.ts";
import { MANAGEMENT_PERMISSIONS, TOKEN_PERMISSIONS } from "#shared/domain/permissions.ts";
import { luhnSum } from "#shared/domain/tokens/checksums.ts";
import { call } from "../api-call.ts";

/** Fixed numbers: the canary tenant's token, and the examples' bodies (a number no fixture token holds). */
export const CARDS = { canary: "4242424242424242", example: "4000056655665556" } as const;
export const card = (number: string) => ({ number, expiration_month: 12, expiration_year: 2030 });
/** A Luhn-valid 16-digit number from 15 digits, so that each fixture token holds a number of its own. */
export const luhnNumber = (first15: string) => `${first15}${(10 - (luhnSum(first15, true) % 10)) % 10}`;

/** The fields of set-up answers the fixtures use. */
type Json = Record<"id" | "key" | "management_key" | "management_appid" | "nonce" | "session_key", string>;
export type Run = { url: string; rootKey: string; destinationUrl: string; outboxDir: string; kmsDir: string };

let serial = 0;
export type TenantWorld = Awaited<ReturnType<typeof buildTenant>>;

/** A tenant with its fixtures, made with the root key; its proxy forwards to `destinationUrl`. */
export async function buildTenant(run: Run, label: string) {
  serial += 1;
  const post = (path: string, key: string, body: unknown, expected = 201) =>
    call<Json>(run.url, "POST", path, key, body, expected);
  const tenant = await post("/tenants", run.rootKey, { name: `fuzz ${label} ${serial}` });
  const owner = tenant.management_key;
  const application = (type: string, permissions: readonly string[], rules: unknown[] = []) =>
    post("/applications", owner, { name: `fuzz ${type}`, type, permissions, rules });
  const management = await application("management", MANAGEMENT_PERMISSIONS);
  const pub = await application("public", ["token:create", "token:update"]);
  const reveal = [{ priority: 1, container: "/", transform: "reveal", permissions: [...TOKEN_PERMISSIONS] }];
  const pvt = await application("private", TOKEN_PERMISSIONS, reveal);
  const victim = await application("private", ["token:read"]);
  const extraKey = await post(`/applications/${victim.id}/keys`, owner, {});
  const session = await post("/sessions", pub.key, {});
  const permissions = ["token:create", "token:read"];
  await post("/sessions/authorize", pvt.key, { nonce: session.nonce, permissions }, 200);
  const spare = await post("/sessions", pub.key, {});
  // Card tokens, each with a number no other token of the run holds: the first three are what a caller without
  // reveal must never see in full; the fourth is what the revealing key PATCHes (the mask it sets may show it).
  const numbers: string[] = [];
  const tokens: string[] = [];
  for (let i = 0; i < 4; i++) {
    const number = luhnNumber(`4${String(serial * 10 + i).padStart(14, "0")}`);
    numbers.push(number);
    const body = { type: "card", data: card(number), containers: ["/fuzz/"], metadata: { n: String(i) } };
    tokens.push((await post("/tokens", pvt.key, body)).id);
  }
  const transaction = await post("/transactions", pvt.key, {});
  const app = { application: { id: pvt.id } };
  const proxy = await post("/proxies", owner, { name: "p", destination_url: run.destinationUrl, ...app });
  const formula = await post("/reactor-formulas", owner, {
    name: "fuzz formula",
    code: "module.exports = async function (req) { return { raw: { args: req.args } }; };",
    configuration: [{ name: "region", type: "string" }],
    request_parameters: [{ name: "card.number", type: "string" }],
  });
  const reactorBody = { name: "r", formula: { id: formula.id }, configuration: { region: "eu" } };
  const reactor = await post("/reactors", owner, { ...reactorBody, ...app });
  // Data-key versions are numbered by period, not from 1: the current one, the one before, the next.
  const keys = await call<{ current: number }>(run.url, "GET", "/tenants/self/keys", owner, undefined, 200);
  const invite = (email: string) => post("/tenants/self/invitations", owner, { email });
  const invitations = [await invite(`a${serial}@example.com`), await invite(`b${serial}@example.com`)];
  // Codes for POST /invitations/accept, read from the local outbox as an invitee would: a case with one of them
  // gets past the code (each is good once), so fuzzed names reach the member's creation.
  const invitationCodes: string[] = [];
  for (const name of ["c", "d", "e", "f"]) {
    const email = `${name}${serial}@example.com`;
    await invite(email);
    const code = invitationCodeIn(newestMessageTo(run.outboxDir, email) ?? "");
    if (code) invitationCodes.push(code);
  }
  return {
    /** The card numbers a caller of another tenant, or of this one without reveal, must never see in full. */
    secretNumbers: numbers.slice(0, 3),
    /** owner: from POST /tenants; session: authorized for token:create and :read. */
    keys: {
      owner,
      management: management.key,
      public: pub.key,
      private: pvt.key,
      session: session.session_key,
    },
    /** Ids by the name of the path parameter (`keyId`), else of the collection segment that precedes it. */
    ids: {
      applications: [victim.id, pvt.id, pub.id, management.id, tenant.management_appid],
      keyId: [extraKey.id],
      version: [keys.current, keys.current - 1, keys.current + 1].map(String),
      tokens: tokens.slice(0, 3),
      revealerTokens: tokens.slice(3),
      transactions: [transaction.id],
      invitations: invitations.map((i) => i.id),
      proxies: [proxy.id],
      "reactor-formulas": [formula.id],
      reactors: [reactor.id],
    } as Record<string, string[]>,
    /** A session nonce not yet authorized. */
    nonce: spare.nonce,
    /** Invitation codes not yet accepted (from the outbox). */
    invitationCodes,
    proxyKey: proxy.key,
    /** A customer KMS key (its local stand-in) for PUT /tenants/self/keys/kms. */
    kmsKeyArn: createLocalCustomerKey(run.kmsDir, `fuzz-${label}-${serial}`),
  };
}
