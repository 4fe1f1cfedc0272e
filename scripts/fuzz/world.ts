/**
 * The fuzz's fixtures, made through the public HTTP API: a tenant with applications of every type, a session,
 * tokens, a transaction, a proxy, a formula, a reactor and invitations (docs/fuzzing.md, "What it sends").
 */
import { createLocalCustomerKey } from "#shared/adapters/local/local-customer-keys.ts";
import { invitationCodeIn, newestMessageTo } from "#shared/adapters/local/outbox-mailer.ts";
import { MANAGEMENT_PERMISSIONS, TOKEN_PERMISSIONS } from "#shared/domain/permissions.ts";
import { luhnSum } from "#shared/domain/tokens/checksums.ts";
import { call } from "../api-call.ts";

/** The examples' card number: no fixture token holds it. */
export const EXAMPLE_CARD = "4000056655665556";
export const card = (number: string) => ({ number, expiration_month: 12, expiration_year: 2030 });
/** A Luhn-valid 16-digit number from 15 digits, so that each fixture token holds a number of its own. */
export const luhnNumber = (first15: string) => `${first15}${(10 - (luhnSum(first15, true) % 10)) % 10}`;

type Json = Record<"id" | "key" | "management_key" | "management_appid" | "nonce" | "session_key", string>;
export type Run = { url: string; rootKey: string; destinationUrl: string; outboxDir: string; kmsDir: string };
export type TenantWorld = Awaited<ReturnType<typeof buildTenant>>;
let serial = 0;

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
  // Card tokens with numbers no other token of the run holds: the first three are what a caller without reveal
  // must never see in full; the fourth is what the revealing key PATCHes (the mask it sets may show it).
  const numbers = [0, 1, 2, 3].map((i) => luhnNumber(`4${String(serial * 10 + i).padStart(14, "0")}`));
  const tokens: string[] = [];
  for (const [i, number] of numbers.entries()) {
    const body = { type: "card", data: card(number), containers: ["/fuzz/"], metadata: { n: `${i}` } };
    tokens.push((await post("/tokens", pvt.key, body)).id);
  }
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
  const emails = ["a", "b", "c", "d", "e", "f"].map((name) => `${name}${serial}@example.com`);
  const invitations: Json[] = [];
  for (const email of emails) invitations.push(await post("/tenants/self/invitations", owner, { email }));
  // Codes for POST /invitations/accept of the last four, read from the local outbox as an invitee would (each is
  // good once); the first two stay pending for the routes that resend or delete an invitation.
  const inbox = (email: string) => invitationCodeIn(newestMessageTo(run.outboxDir, email) ?? "") ?? [];
  const invitationCodes = emails.slice(2).flatMap(inbox);
  const keysByRole = { owner, management: management.key, public: pub.key, private: pvt.key };
  return {
    secretNumbers: numbers.slice(0, 3),
    keys: { ...keysByRole, session: session.session_key },
    /** Ids by the name of the path parameter (`keyId`), else of the collection segment that precedes it. */
    ids: {
      applications: [victim.id, pvt.id, pub.id, management.id, tenant.management_appid],
      keyId: [extraKey.id],
      version: [keys.current, keys.current - 1, keys.current + 1].map(String),
      tokens: tokens.slice(0, 3),
      revealerTokens: tokens.slice(3),
      transactions: [(await post("/transactions", pvt.key, {})).id],
      invitations: invitations.slice(0, 2).map((i) => i.id),
      proxies: [proxy.id],
      "reactor-formulas": [formula.id],
      reactors: [reactor.id],
    } as Record<string, string[]>,
    invitationCodes,
    proxyKey: proxy.key,
    /** The examples' `<name>` placeholders (examples.ts). */
    fill: {
      tokenId: tokens[0],
      applicationId: pvt.id,
      formulaId: formula.id,
      nonce: (await post("/sessions", pub.key, {})).nonce, // not yet authorized
      kmsKeyArn: createLocalCustomerKey(run.kmsDir, `fuzz-${label}-${serial}`),
    } as Record<string, string | undefined>,
  };
}
