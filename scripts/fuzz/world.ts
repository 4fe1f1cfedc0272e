/**
 * The fuzz's fixtures, made through the public HTTP API: for a tenant, applications of every type, a session,
 * tokens, a transaction, a proxy, a formula and a reactor, invitations and a member. A fresh pair of tenants
 * per batch, so that what one batch deleted or revoked does not blunt the next.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { MANAGEMENT_PERMISSIONS, TOKEN_PERMISSIONS } from "#shared/domain/permissions.ts";
import { ownKeys } from "./values.ts";

/** Fixed numbers: the canary tenant's token, and the examples' bodies (a number no fixture token holds). */
export const CARDS = { canary: "4242424242424242", example: "4000056655665556" } as const;

/** A Luhn-valid 16-digit number from 15 digits, so that each fixture token holds a number of its own. */
export function luhnNumber(first15: string): string {
  let sum = 0;
  for (let i = 0; i < 15; i++) {
    // Counting from the check digit (position 0, at the right end), every odd position is doubled.
    let d = Number(first15[14 - i]);
    if (i % 2 === 0) d = d * 2 > 9 ? d * 2 - 9 : d * 2;
    sum += d;
  }
  return `${first15}${(10 - (sum % 10)) % 10}`;
}

let numbers = 0;
/** A number no other fixture token of this run holds: an answer carrying it says whose data leaked. */
const fixtureNumber = () => luhnNumber(`4${String(++numbers).padStart(14, "0")}`);
export const card = (number: string) => ({ number, expiration_month: 12, expiration_year: 2030 });

const revealEverything = [
  {
    description: "all",
    priority: 1,
    container: "/",
    transform: "reveal",
    permissions: [...TOKEN_PERMISSIONS],
  },
];

export interface TenantWorld {
  tenantId: string;
  /** Each fixture token's card number, by token id. */
  numbers: Map<string, string>;
  keys: {
    /** The OWNER's management key (from POST /tenants). */
    owner: string;
    /** A management application created by the owner. */
    management: string;
    /** The management key of an ADMIN member (accepted invitation). */
    member: string;
    public: string;
    private: string;
    /** A session authorized for token:create and token:read. */
    session: string;
  };
  /** Ids by the collection segment that precedes `{id}` in the route table's paths. */
  ids: Record<string, string[]>;
  /** Ids of application keys (`{keyId}`). */
  keyIds: string[];
  /** A session nonce not yet authorized (POST /sessions/authorize). */
  nonce: string;
  /** An invitation code not yet accepted (POST /invitations/accept). */
  invitationCode: string;
  proxyKey: string;
  tokenIds: string[];
}

export class Api {
  requests = 0;
  constructor(
    readonly url: string,
    readonly rootKey: string,
    readonly dataDir: string,
  ) {}

  /** One set-up request; throws unless it answered `expected`. */
  async call<T>(method: string, path: string, key: string | undefined, body: unknown, expected: number) {
    this.requests += 1;
    const res = await fetch(`${this.url}${path}`, {
      method,
      headers: {
        ...(key ? { "svc-api-key": key } : {}),
        ...(body !== undefined ? { "content-type": "application/json" } : {}),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    if (res.status !== expected)
      throw new Error(
        `set-up ${method} ${path} answered ${res.status}, not ${expected}: ${text.slice(0, 300)}`,
      );
    return (text ? JSON.parse(text) : undefined) as T;
  }

  /** A set-up request that may be refused: its body when it answered 2xx, undefined otherwise. */
  async tryCall<T>(
    method: string,
    path: string,
    key: string | undefined,
    body: unknown,
  ): Promise<T | undefined> {
    this.requests += 1;
    const res = await fetch(`${this.url}${path}`, {
      method,
      headers: { ...(key ? { "svc-api-key": key } : {}), "content-type": "application/json" },
      body: JSON.stringify(body),
    });
    const text = await res.text();
    return res.ok ? (JSON.parse(text) as T) : undefined;
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

export async function buildTenant(api: Api, label: "A" | "B", destinationUrl: string): Promise<TenantWorld> {
  serial += 1;
  const tenant = await api.call<{ id: string; management_key: string; management_application_id: string }>(
    "POST",
    "/tenants",
    api.rootKey,
    { name: `fuzz ${label} ${serial}` },
    201,
  );
  const owner = tenant.management_key;
  const application = (type: string, permissions: readonly string[], rules: unknown[] = []) =>
    api.call<{ id: string; key: string }>(
      "POST",
      "/applications",
      owner,
      { name: `fuzz ${type}`, type, permissions, rules },
      201,
    );
  const management = await application("management", MANAGEMENT_PERMISSIONS);
  const pub = await application("public", ["token:create", "token:update"]);
  const pvt = await application("private", TOKEN_PERMISSIONS, revealEverything);
  const victim = await application("private", ["token:read"]);
  const extraKey = await api.call<{ id: string }>("POST", `/applications/${victim.id}/keys`, owner, {}, 201);

  const session = await api.call<{ session_key: string; nonce: string }>(
    "POST",
    "/sessions",
    pub.key,
    {},
    201,
  );
  await api.call(
    "POST",
    "/sessions/authorize",
    pvt.key,
    { nonce: session.nonce, permissions: ["token:create", "token:read"] },
    200,
  );
  const spare = await api.call<{ nonce: string }>("POST", "/sessions", pub.key, {}, 201);

  const tokenIds: string[] = [];
  const numbers = new Map<string, string>();
  for (let i = 0; i < 3; i++) {
    const number = fixtureNumber();
    const token = await api.call<{ id: string }>(
      "POST",
      "/tokens",
      pvt.key,
      { type: "card", data: card(number), containers: ["/fuzz/"], metadata: { n: String(i) } },
      201,
    );
    tokenIds.push(token.id);
    numbers.set(token.id, number);
  }
  const transaction = await api.call<{ id: string }>("POST", "/transactions", pvt.key, {}, 201);
  const proxy = await api.call<{ id: string; key: string }>(
    "POST",
    "/proxies",
    owner,
    { name: "fuzz proxy", destination_url: destinationUrl, application: { id: pvt.id } },
    201,
  );
  const formula = await api.call<{ id: string }>(
    "POST",
    "/reactor-formulas",
    owner,
    {
      name: "fuzz formula",
      code: "module.exports = async function (req) { return { raw: { args: req.args } }; };",
      configuration: [{ name: "region", type: "string" }],
      request_parameters: [
        { name: "card.number", type: "string" },
        { name: "amount", type: "number", optional: true },
      ],
    },
    201,
  );
  const reactor = await api.call<{ id: string }>(
    "POST",
    "/reactors",
    owner,
    {
      name: "fuzz reactor",
      formula: { id: formula.id },
      configuration: { region: "eu" },
      application: { id: pvt.id },
    },
    201,
  );

  // A tenant of one's own may name parameters after prototype keys: where that is refused (400), it is skipped.
  const hostileReactors: string[] = [];
  const hostileFormula = await api.tryCall<{ id: string }>("POST", "/reactor-formulas", owner, {
    name: "fuzz hostile formula",
    code: "module.exports = async function (req) { return { raw: { args: req.args } }; };",
    configuration: [{ name: "constructor.prototype.polluted", type: "string" }],
    request_parameters: [
      { name: "__proto__.expires_at", type: "string", optional: true },
      { name: "constructor.prototype.mask", type: "string", optional: true },
      { name: "card.number", type: "string", optional: true },
    ],
  });
  if (hostileFormula) {
    const hostile = await api.tryCall<{ id: string }>("POST", "/reactors", owner, {
      name: "fuzz hostile reactor",
      formula: { id: hostileFormula.id },
      configuration: ownKeys([["constructor.prototype.polluted", "by-configuration"]]),
      application: { id: pvt.id },
    });
    if (hostile) hostileReactors.push(hostile.id);
  }

  const email = (what: string) => `fuzz-${what}-${label}-${serial}@example.com`.toLowerCase();
  const pending = await api.call<{ id: string }>(
    "POST",
    "/tenants/self/invitations",
    owner,
    { email: email("pending") },
    201,
  );
  const accepted = await api.call<{ id: string }>(
    "POST",
    "/tenants/self/invitations",
    owner,
    { email: email("member") },
    201,
  );
  const member = await api.call<{ id: string; management_key: string }>(
    "POST",
    "/invitations/accept",
    undefined,
    { code: api.invitationCode(email("member")), first_name: "Fuzz" },
    201,
  );
  const open = await api.call<{ id: string }>(
    "POST",
    "/tenants/self/invitations",
    owner,
    { email: email("open") },
    201,
  );

  return {
    tenantId: tenant.id,
    numbers,
    keys: {
      owner,
      management: management.key,
      member: member.management_key,
      public: pub.key,
      private: pvt.key,
      session: session.session_key,
    },
    ids: {
      applications: [victim.id, pvt.id, pub.id, management.id, tenant.management_application_id],
      tokens: tokenIds,
      transactions: [transaction.id],
      members: [member.id],
      invitations: [pending.id, open.id, accepted.id],
      proxies: [proxy.id],
      "reactor-formulas": [formula.id],
      reactors: [reactor.id, ...hostileReactors],
    },
    keyIds: [extraKey.id],
    nonce: spare.nonce,
    invitationCode: api.invitationCode(email("open")),
    proxyKey: proxy.key,
    tokenIds,
  };
}
