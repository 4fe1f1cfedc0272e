/**
 * The fuzz's fixtures, made through the public HTTP API (docs/fuzzing.md, "What it sends"), and a case resolved
 * against them into the HTTP request it stands for, with what the oracle needs to judge its answer.
 */
import { join } from "node:path";
import { createLocalCustomerKey } from "#shared/adapters/local/local-customer-keys.ts";
import { invitationCodeIn, newestMessageTo } from "#shared/adapters/local/outbox-mailer.ts";
import { MANAGEMENT_PERMISSIONS, TOKEN_PERMISSIONS } from "#shared/domain/permissions.ts";
import { luhnSum } from "#shared/domain/tokens/checksums.ts";
import { call } from "../api-call.ts";
import { applyMutations, type FuzzCase, type WriteRoute } from "./cases.ts";
import type { Answer, CheckContext } from "./check.ts";
import { card, exampleFor, examples } from "./examples.ts";

/** A Luhn-valid 16-digit number from 15 digits, so that each fixture token holds a number of its own. */
export const luhnNumber = (first15: string) => `${first15}${(10 - (luhnSum(first15, true) % 10)) % 10}`;
type Json = Record<"id" | "key" | "management_key" | "management_appid" | "nonce" | "session_key", string>;
export type Run = { url: string; rootKey: string; dataDir: string; destinationUrl: string };
/** The master key's file in the data directory; the local customer keys sit beside it (shared/config.ts). */
export const MASTER_KEY = "master.key";
type TenantWorld = Awaited<ReturnType<typeof buildTenant>>;
/** The batch's two tenants; the canary tenant's card numbers, which no case's caller may see. */
type Fixtures = Run & { A: TenantWorld; B: TenantWorld; canary: string[] };
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
  const token = (number: string) => ({ type: "card", data: card(number), containers: ["/fuzz/"] });
  const tokens = (await Promise.all(numbers.map((n) => post("/tokens", pvt.key, token(n))))).map((t) => t.id);
  const app = { application: { id: pvt.id } };
  const proxy = await post("/proxies", owner, { name: "p", destination_url: run.destinationUrl, ...app });
  const formula = await post("/reactor-formulas", owner, examples.createFormula); // the example, valid as it is
  const reactorBody = { name: "r", formula: { id: formula.id }, configuration: { region: "eu" } };
  const reactor = await post("/reactors", owner, { ...reactorBody, ...app });
  const customerKeys = join(run.dataDir, `${MASTER_KEY}.customer-keys`); // the local default (shared/config.ts)
  // Data-key versions are numbered by period, not from 1: the current one, the one before, the next.
  const keys = await call<{ current: number }>(run.url, "GET", "/tenants/self/keys", owner, undefined, 200);
  const emails = ["a", "b", "c", "d", "e", "f"].map((name) => `${name}${serial}@example.com`);
  const invite = (email: string) => post("/tenants/self/invitations", owner, { email });
  const invitations = await Promise.all(emails.map(invite));
  // Codes for POST /invitations/accept of the last four, read from the local outbox as an invitee would (each is
  // good once); the first two stay pending for the routes that resend or delete an invitation.
  const outbox = join(run.dataDir, "outbox");
  const roles = { owner, management: management.key, public: pub.key, private: pvt.key };
  const inbox = (email: string) => invitationCodeIn(newestMessageTo(outbox, email) ?? "") ?? [];
  return {
    secretNumbers: numbers.slice(0, 3),
    keys: { ...roles, session: session.session_key },
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
    invitationCodes: emails.slice(2).flatMap(inbox),
    proxyKey: proxy.key,
    /** The examples' `<name>` placeholders (examples.ts). */
    fill: {
      tokenId: tokens[0],
      applicationId: pvt.id,
      formulaId: formula.id,
      nonce: (await post("/sessions", pub.key, {})).nonce, // not yet authorized
      kmsKeyArn: createLocalCustomerKey(customerKeys, `fuzz-${label}-${serial}`),
    } as Record<string, string | undefined>,
  };
}

/** A request ready to send, with what the oracle needs to judge its answer. */
export type PreparedRequest = ReturnType<typeof prepare>;
export function prepare(c: FuzzCase, route: WriteRoute, f: Fixtures) {
  const [first, kind] = c.key.split(".") as ["A" | "B", keyof TenantWorld["keys"] | undefined];
  const others: Record<string, string> = { root: f.rootKey, garbage: "key_fuzz_garbage_0000000" };
  const key = kind ? f[first].keys[kind] : others[first];
  const [own, other] = kind && first === "B" ? [f.B, f.A] : [f.A, f.B];
  // A revealing key PATCHes a token of its own: the mask it sets may rightly show that token's data to others.
  const revealerPatch = kind === "private" && route.method === "PATCH";
  let crossTenant = false;
  const segments = route.path.split("/");
  let path = segments
    .map((segment, i) => {
      const name = /^\{(.+)\}$/.exec(segment)?.[1];
      if (!name) return segment;
      const choice = c.params[name] ?? { kind: "odd", value: "" };
      if (choice.kind === "odd") return choice.value;
      if (name.endsWith("+")) return choice.kind === "own" ? "fuzz/echo" : "fuzz/other";
      const world = choice.kind === "own" ? own : other;
      const collection = revealerPatch && segments[i - 1] === "tokens" ? "revealerTokens" : segments[i - 1];
      const pool = world.ids[name] ?? world.ids[collection as string] ?? [];
      if (choice.kind === "other" && kind) crossTenant = true;
      return pool[choice.index % pool.length] ?? "missing-fixture";
    })
    .join("/");
  const headers: Record<string, string> = {};
  if (key) headers["svc-api-key"] = key;
  if (c.idempotencyKey !== undefined) headers["svc-idempotency-key"] = c.idempotencyKey;
  const proxyKeys = { own: own.proxyKey, other: other.proxyKey, garbage: "pk_fuzz_garbage", none: "" };
  if (c.proxyKey === "query") path += `${path.includes("?") ? "&" : "?"}svc-proxy-key=${own.proxyKey}`;
  else if (c.proxyKey && c.proxyKey !== "none") headers["svc-proxy-key"] = proxyKeys[c.proxyKey];
  const body = bodyOf(c, route, f, own, other);
  if (c.contentType !== "default") {
    if (c.contentType !== null) headers["content-type"] = c.contentType;
  } else if (body !== undefined) headers["content-type"] = route.contentType ?? "application/json";
  const bodyText = body?.subarray(0, 256 * 1024).toString("utf8") ?? "";
  // The card numbers this caller may not see in full: every fixture token's but its own tenant's for the
  // private application (its rules reveal), and the canary's.
  const secrets = f.canary.map((value) => ({ value, whose: "the canary tenant's" }));
  for (const tenant of ["A", "B"] as const)
    if (c.key !== `${tenant}.private`)
      for (const value of f[tenant].secretNumbers) secrets.push({ value, whose: `tenant ${tenant}'s` });
  const requestText = `${path}\n${Object.values(headers).join("\n")}\n${bodyText}`;
  const context: CheckContext = { requestText, secrets, crossTenant, proxy: route.group === "proxy" };
  return { keyRole: c.key, method: route.method, path, headers, body, context };
}

let uniqueCount = 0;
function bodyOf(c: FuzzCase, route: WriteRoute, f: Fixtures, own: TenantWorld, other: TenantWorld) {
  if (c.body.kind === "none") return undefined;
  if (c.body.kind === "raw") return Buffer.from(c.body.text, "latin1");
  const fixture: Record<string, string | undefined> = {
    ...own.fill,
    otherTokenId: other.fill.tokenId,
    destinationUrl: f.destinationUrl,
    unique: String(++uniqueCount),
    invitationCode: own.invitationCodes[uniqueCount % Math.max(1, own.invitationCodes.length)],
  };
  const fill = (_: string, name: string) => String(fixture[name]);
  const example: unknown = JSON.parse(JSON.stringify(exampleFor(route) ?? {}).replace(/<(\w+)>/g, fill));
  return Buffer.from(JSON.stringify(applyMutations(example, c.body.mutations)));
}

/** Sends it; a connection failure or a timeout is an answer too (status 0). */
export async function send(base: string, request: PreparedRequest, timeoutMs: number): Promise<Answer> {
  const { method, headers, body } = request;
  try {
    const init = { method, headers, body, signal: AbortSignal.timeout(timeoutMs) };
    const res = await fetch(`${base}${request.path}`, init);
    return { status: res.status, contentType: res.headers.get("content-type") ?? "", text: await res.text() };
  } catch (error) {
    const text = error instanceof Error ? `${error.name}: ${error.message}` : "Error";
    return { status: 0, contentType: "", text };
  }
}
