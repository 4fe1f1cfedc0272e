import { luhnSum } from "#shared/domain/tokens/checksums.ts";
import { type Client, client, createTenant } from "./http.ts";

export const VISA = "4242424242424242";
export const MASTERCARD = "5555555555554444";
export const ROUTING = "021000021"; // a valid ABA routing number

export interface TokenBody {
  id: string;
  type: string;
  data?: unknown;
  mask?: unknown;
  fingerprint: string;
  containers: string[];
  metadata?: Record<string, string>;
  expires_at?: string;
  created_at: string;
  modified_at?: string;
}

export interface TokenPage {
  pagination: {
    total_items: number;
    page_number: number;
    page_size: number;
    total_pages: number;
    next?: string;
  };
  data: TokenBody[];
}

/** Creates an application of the tenant and returns its key. */
export async function appKey(
  api: Client,
  managementKey: string,
  body: { type: "public" | "private" | "management"; permissions?: string[]; rules?: unknown[] },
): Promise<string> {
  return (await application(api, managementKey, body)).key;
}

/** A new application of the tenant (its id and key); throws unless created. */
export async function application(
  api: Client,
  managementKey: string,
  body: {
    type: "public" | "private" | "management";
    permissions?: string[];
    rules?: unknown[];
    name?: string;
  },
): Promise<{ id: string; key: string }> {
  const res = await api.post<{ id: string; key: string }>("/applications", {
    key: managementKey,
    body: { name: `${body.type} app`, ...body },
  });
  if (res.status !== 201)
    throw new Error(`application creation failed: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body;
}

export const ALL_TOKEN_PERMISSIONS = [
  "token:create",
  "token:read",
  "token:update",
  "token:delete",
  "token:use",
  "token:search",
];

export const revealEverything = [
  {
    description: "all",
    priority: 1,
    container: "/",
    transform: "reveal",
    permissions: ALL_TOKEN_PERMISSIONS,
  },
];

/**
 * A new tenant with a private application holding every token permission: the usual owner of test tokens.
 * `rules`: its access rules too (revealEverything: it reads every token's data).
 */
export async function tenantWithOwner(svc: { url: string; rootKey: string }, rules?: unknown[]) {
  const api = client(svc.url);
  const tenant = await createTenant(api, svc.rootKey);
  const owner = await appKey(api, tenant.managementKey, {
    type: "private",
    permissions: ALL_TOKEN_PERMISSIONS,
    ...(rules ? { rules } : {}),
  });
  return { api, tenant, owner };
}

/**
 * A new tenant of a merchant: its checkout page's public key (token:create, copied by anyone) and its back end's
 * private key holding every token permission (reading masked without `rules`).
 */
export async function merchantKeys(serviceUrl: string, rootKey: string, name: string, rules?: unknown[]) {
  const api = client(serviceUrl);
  const tenant = await createTenant(api, rootKey, name);
  const publicKey = await appKey(api, tenant.managementKey, {
    type: "public",
    permissions: ["token:create"],
  });
  const backEnd = await appKey(api, tenant.managementKey, {
    type: "private",
    permissions: ALL_TOKEN_PERMISSIONS,
    ...(rules ? { rules } : {}),
  });
  return { api, publicKey, backEnd };
}

/** Every token `key` may list, page by page through GET /v2/tokens. */
export async function listAllTokens(api: Client, key: string): Promise<TokenBody[]> {
  const tokens: TokenBody[] = [];
  let start: string | undefined;
  do {
    const page = await api.get<{ data: TokenBody[]; pagination: { next?: string } }>(
      `/v2/tokens?size=100${start ? `&start=${encodeURIComponent(start)}` : ""}`,
      { key },
    );
    tokens.push(...page.body.data);
    start = page.body.pagination.next;
  } while (start);
  return tokens;
}

/** A 16-digit Luhn-valid card number of its own for each `i` (400000…): cards that never deduplicate together. */
export function cardNumberOf(i: number): string {
  const body = `400000${String(i).padStart(9, "0")}`;
  return `${body}${(10 - (luhnSum(body, true) % 10)) % 10}`;
}

/**
 * A session created with `creatorKey` (a public application's) and authorized by `authorizerKey` to read every
 * token revealed (a browser's session whose back end said yes): its session key.
 */
export async function revealingSession(
  api: Client,
  creatorKey: string,
  authorizerKey: string,
): Promise<string> {
  const session = await api.post<{ session_key: string; nonce: string }>("/sessions", { key: creatorKey });
  if (session.status !== 201) throw new Error(`POST /sessions answered ${session.status}`);
  const authorized = await api.post("/sessions/authorize", {
    key: authorizerKey,
    body: {
      nonce: session.body.nonce,
      rules: [{ priority: 1, container: "/", transform: "reveal", permissions: ["token:read"] }],
    },
  });
  if (authorized.status !== 200) throw new Error(`POST /sessions/authorize answered ${authorized.status}`);
  return session.body.session_key;
}
