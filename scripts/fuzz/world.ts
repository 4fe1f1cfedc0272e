/**
 * The fuzz's fixtures, made through the public HTTP API: for a tenant, applications of every type, a session,
 * tokens, a transaction, a proxy, a formula and a reactor, invitations and a member. A fresh pair of tenants
 * per batch, so that what one batch deleted or revoked does not blunt the next.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { MANAGEMENT_PERMISSIONS, TOKEN_PERMISSIONS } from "#shared/domain/permissions.ts";
import { luhnSum } from "#shared/domain/tokens/checksums.ts";
import { ownKeys } from "./values.ts";

/** Fixed numbers: the canary tenant's token, and the examples' bodies (a number no fixture token holds). */
export const CARDS = { canary: "4242424242424242", example: "4000056655665556" } as const;

/** A Luhn-valid 16-digit number from 15 digits, so that each fixture token holds a number of its own. */
export const luhnNumber = (first15: string) => `${first15}${(10 - (luhnSum(first15, true) % 10)) % 10}`;

let numbers = 0;
/** A number no other fixture token of this run holds: an answer carrying it says whose data leaked. */
const fixtureNumber = () => luhnNumber(`4${String(++numbers).padStart(14, "0")}`);
export const card = (number: string) => ({ number, expiration_month: 12, expiration_year: 2030 });

export type TenantWorld = Awaited<ReturnType<typeof buildTenant>>;

/** The fields of set-up answers the fixtures use. */
type Json = Record<
  "id" | "key" | "management_key" | "management_application_id" | "nonce" | "session_key",
  string
>;

export class Api {
  requests = 0;
  constructor(
    readonly url: string,
    readonly rootKey: string,
    readonly dataDir: string,
  ) {}

  /** One set-up request: throws unless it answered `expected`. */
  async call<T = Json>(method: string, path: string, key?: string, body?: unknown, expected = 201) {
    const answer = await this.attempt<T>(method, path, key, body);
    if (answer.status !== expected)
      throw new Error(`set-up ${method} ${path} answered ${answer.status}, not ${expected}: ${answer.text}`);
    return answer.body as T;
  }

  /** A set-up POST that must answer 201. */
  post = <T = Json>(path: string, key: string | undefined, body: unknown) =>
    this.call<T>("POST", path, key, body);

  /** A set-up request that may be refused: status, text (cut) and body. */
  async attempt<T = Json>(method: string, path: string, key?: string, body?: unknown) {
    this.requests += 1;
    const headers: Record<string, string> = body === undefined ? {} : { "content-type": "application/json" };
    if (key) headers["svc-api-key"] = key;
    const res = await fetch(`${this.url}${path}`, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    return {
      status: res.status,
      text: text.slice(0, 300),
      body: (res.ok && text ? JSON.parse(text) : undefined) as T,
    };
  }

  /** The acceptance code of the newest invitation e-mail to `email`, from the local outbox. */
  invitationCode(email: string): string {
    const outbox = join(this.dataDir, "outbox");
    const mail = readdirSync(outbox)
      .sort()
      .map((f) => readFileSync(join(outbox, f), "utf8"))
      .filter((m) => m.includes(`To: <${email}>`))
      .at(-1);
    const code = mail && /[?#]code=([A-Za-z0-9_%-]+)/.exec(mail)?.[1];
    if (!code) throw new Error(`no invitation e-mail to ${email} in ${outbox}`);
    return decodeURIComponent(code);
  }
}

let serial = 0;
const formulaCode = "module.exports = async function (req) { return { raw: { args: req.args } }; };";

export async function buildTenant(api: Api, label: "A" | "B", destinationUrl: string) {
  serial += 1;
  const tenant = await api.post("/tenants", api.rootKey, { name: `fuzz ${label} ${serial}` });
  const owner = tenant.management_key;
  const application = (type: string, permissions: readonly string[], rules: unknown[] = []) =>
    api.post("/applications", owner, { name: `fuzz ${type}`, type, permissions, rules });
  const management = await application("management", MANAGEMENT_PERMISSIONS);
  const pub = await application("public", ["token:create", "token:update"]);
  const reveal = [{ priority: 1, container: "/", transform: "reveal", permissions: [...TOKEN_PERMISSIONS] }];
  const pvt = await application("private", TOKEN_PERMISSIONS, reveal);
  const victim = await application("private", ["token:read"]);
  const extraKey = await api.post(`/applications/${victim.id}/keys`, owner, {});

  const session = await api.post("/sessions", pub.key, {});
  const permissions = ["token:create", "token:read"];
  await api.call("POST", "/sessions/authorize", pvt.key, { nonce: session.nonce, permissions }, 200);
  const spare = await api.post("/sessions", pub.key, {});

  const numbers = new Map<string, string>();
  for (let i = 0; i < 3; i++) {
    const number = fixtureNumber();
    const body = { type: "card", data: card(number), containers: ["/fuzz/"], metadata: { n: String(i) } };
    numbers.set((await api.post("/tokens", pvt.key, body)).id, number);
  }
  const transaction = await api.post("/transactions", pvt.key, {});
  const app = { id: pvt.id };
  const proxy = await api.post("/proxies", owner, {
    name: "fuzz proxy",
    destination_url: destinationUrl,
    application: app,
  });
  const formula = await api.post("/reactor-formulas", owner, {
    name: "fuzz formula",
    code: formulaCode,
    configuration: [{ name: "region", type: "string" }],
    request_parameters: [
      { name: "card.number", type: "string" },
      { name: "amount", type: "number", optional: true },
    ],
  });
  const reactor = await api.post("/reactors", owner, {
    name: "fuzz reactor",
    formula: { id: formula.id },
    configuration: { region: "eu" },
    application: app,
  });

  // A tenant of one's own may name parameters after prototype keys: where that is refused (400), it is skipped.
  const hostileFormula = await api.attempt("POST", "/reactor-formulas", owner, {
    name: "fuzz hostile formula",
    code: formulaCode,
    configuration: [{ name: "constructor.prototype.polluted", type: "string" }],
    request_parameters: ["__proto__.expires_at", "constructor.prototype.mask", "card.number"].map((name) => ({
      name,
      type: "string",
      optional: true,
    })),
  });
  const hostileReactor = hostileFormula.body
    ? await api.attempt("POST", "/reactors", owner, {
        name: "fuzz hostile reactor",
        formula: { id: hostileFormula.body.id },
        application: app,
        configuration: ownKeys([["constructor.prototype.polluted", "by-configuration"]]),
      })
    : undefined;

  const email = (what: string) => `fuzz-${what}-${label}-${serial}@example.com`.toLowerCase();
  const invite = (what: string) => api.post("/tenants/self/invitations", owner, { email: email(what) });
  const pending = await invite("pending");
  const accepted = await invite("member");
  const code = api.invitationCode(email("member"));
  const member = await api.post("/invitations/accept", undefined, { code, first_name: "Fuzz" });
  const open = await invite("open");

  const tokenIds = [...numbers.keys()];
  const applications = [victim, pvt, pub, management].map((a) => a.id);
  return {
    /** Each fixture token's card number, by token id. */
    numbers,
    /** owner: from POST /tenants; member: an ADMIN member's; session: authorized for token:create and :read. */
    keys: {
      owner,
      management: management.key,
      member: member.management_key,
      public: pub.key,
      private: pvt.key,
      session: session.session_key,
    },
    /** Ids by the collection segment that precedes `{id}` in the route table's paths. */
    ids: {
      applications: [...applications, tenant.management_application_id],
      tokens: tokenIds,
      transactions: [transaction.id],
      members: [member.id],
      invitations: [pending.id, open.id, accepted.id],
      proxies: [proxy.id],
      "reactor-formulas": [formula.id],
      reactors: [reactor.id, ...(hostileReactor?.body ? [hostileReactor.body.id] : [])],
    } as Record<string, string[]>,
    /** Ids of application keys (`{keyId}`). */
    keyIds: [extraKey.id],
    /** A session nonce not yet authorized, and an invitation code not yet accepted. */
    nonce: spare.nonce,
    invitationCode: api.invitationCode(email("open")),
    proxyKey: proxy.key,
    tokenIds,
  };
}
