import type * as z from "zod";
import type { Permission } from "#shared/domain/permissions.ts";

/** One Lambda per endpoint group; the local gateway maps the same groups to the same handlers. */
export const FUNCTION_GROUPS = [
  "system",
  "tenants",
  "applications",
  "logs",
  "tokens",
  "transactions",
  "sessions",
  "members",
  "proxies",
  "proxy",
  "reactors",
] as const;
export type FunctionGroup = (typeof FUNCTION_GROUPS)[number];

/**
 * Which of the keys KMS wraps a group's function may use (lib/constructs/api-function.ts grants exactly this):
 * `data`, a tenant's every key (token data, its HMACs, what is sealed beside them); `answers`, only a tenant's
 * answer keys (idempotent answers: shared/domain/keys/key-refs.ts), for groups that never open token data;
 * `probe`, only the readiness probe's key; `none`, no key.
 */
export type DataKeyUse = "data" | "answers" | "probe" | "none";

export const GROUP_DATA_KEYS = {
  system: "probe",
  tenants: "answers",
  applications: "answers",
  logs: "none",
  tokens: "data",
  transactions: "answers",
  sessions: "answers",
  members: "answers",
  proxies: "data",
  proxy: "data",
  reactors: "data",
} as const satisfies Record<FunctionGroup, DataKeyUse>;

export type HttpMethod = "GET" | "POST" | "PUT" | "PATCH" | "DELETE";

/** Who may call: a tenant key, the deployment's root key, or anyone. */
export type AuthMode = "key" | "root" | "none";

type AnyObject = z.ZodType<Record<string, unknown>>;

export interface ResponseSpec {
  description: string;
  schema?: z.ZodType;
}

export interface RouteSpec {
  method: HttpMethod;
  path: string;
  group: FunctionGroup;
  auth: AuthMode;
  /** Every permission listed is required. */
  permissions?: readonly Permission[];
  summary: string;
  tags: readonly string[];
  params?: AnyObject;
  query?: AnyObject;
  body?: z.ZodType;
  /**
   * Takes any body, read by the handler as sent (proxy invocations): nothing parses or validates it here, and
   * the OpenAPI document offers any content type.
   */
  rawBody?: boolean;
  /** Content type the body must carry (PATCH routes require merge-patch). Any JSON is accepted otherwise. */
  contentType?: "application/merge-patch+json";
  responses: Record<number, ResponseSpec>;
  /** POST/PUT/PATCH honour SVC-IDEMPOTENCY-KEY unless this is false (honoursIdempotencyKey). */
  idempotent?: boolean;
  /**
   * The answer holds many tokens (POST /tokenize): its replay presents each that still stands, and answers one
   * deleted or changed since by a stub `{id, created_at, replay: "gone" | "changed"}` in its place, instead of
   * failing whole (404/409). A resumed import would otherwise lose the token ids of the whole batch.
   */
  replayEachToken?: boolean;
  /**
   * The 2xx answer holds a credential (a new key, a session key, a proxy's key, the webhook secret). Its caller's
   * key is looked up fresh (a key revoked on another instance gets no credential from this one's cache: review
   * round 7), and the answer is never stored for replay to a caller whose credential is shared by design (a public
   * key, in every browser of a merchant), since anyone else holding that key and sending the same idempotency key
   * would receive it.
   */
  answersCredential?: boolean;
  /** The write joins the open transaction SVC-TRANSACTION-ID names, when the caller sends one (beta). */
  transactional?: boolean;
  /**
   * Query parameters named `<prefix>.<name>` the route reads besides its query schema's own (the token list's
   * `metadata.<key>=value` filters): the schema lets them through, the OpenAPI document describes them.
   */
  queryPrefix?: { prefix: string; description: string };
  /**
   * A credential the handler checks itself, where the middleware checks none (`auth: "none"`): the proxy key
   * (SVC-PROXY-KEY or svc-proxy-key, with SVC-API-KEY when the proxy requires it). The OpenAPI document's
   * security follows it; a route with `auth: "none"` and no credential is public.
   */
  credential?: "proxy-key";
  /** Largest body this route takes (default SVC_MAX_BODY_BYTES). */
  maxBodyBytes?: number;
  /**
   * Counted against a separate, smaller budget of the tenant besides its request budget (search: each query
   * is an equality oracle, so it is rate-limited on its own; shared/http/middleware/rate-limit.ts).
   */
  rateBucket?: "search";
  /** Session keys may call this route (token operations); every other route refuses them with 403. */
  allowSessions?: boolean;
  /**
   * Browsers may call it cross-origin (CORS): a route public and session keys use. Its path answers preflights,
   * and an actual request's `Origin` must be one the key's application lists (shared/http/middleware/cors.ts).
   * Management and root routes never set it.
   */
  cors?: boolean;
  /**
   * The handler sets the answer's own Content-Security-Policy (the Elements frame page); every other answer
   * gets `sandbox` (security-headers.ts).
   */
  ownContentSecurityPolicy?: boolean;
  /** Hidden from the OpenAPI document (test-only routes). */
  internal?: boolean;
}

/** A route table: operation id → route. Built in shared/api and handed to shared/http, never imported by it. */
export type RouteTable = Record<string, RouteSpec>;

/** A route of the table with its operation id. */
export type ApiRoute = RouteSpec & { operationId: string };

/** The table as a list, in its order, each route with its operation id. */
export function listRoutes<T extends RouteTable>(
  table: T,
): (RouteSpec & { operationId: keyof T & string })[] {
  return Object.entries(table).map(([operationId, route]) => ({ operationId, ...route }));
}

/** Methods whose requests may carry SVC-IDEMPOTENCY-KEY. */
export const IDEMPOTENT_METHODS: ReadonlySet<string> = new Set(["POST", "PUT", "PATCH"]);

/** Whether the route honours SVC-IDEMPOTENCY-KEY: the idempotency middleware and the OpenAPI document ask here. */
export const honoursIdempotencyKey = (route: Pick<RouteSpec, "method" | "idempotent">) =>
  route.idempotent !== false && IDEMPOTENT_METHODS.has(route.method);

export const routeKeyOf = (route: { method: string; path: string }) => `${route.method} ${route.path}`;

type Out<S> = S extends z.ZodType ? z.output<S> : undefined;

export type ParamsOf<R extends RouteSpec> = Out<R["params"]>;
export type QueryOf<R extends RouteSpec> = Out<R["query"]>;
export type BodyOf<R extends RouteSpec> = Out<R["body"]>;
