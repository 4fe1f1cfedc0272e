/**
 * What `npm run cost` measures: each operation's set-up through the public HTTP API and the request it measures,
 * and the routes it stands for. Every route of the route table is either measured by an operation here or
 * excluded below with its reason (test/unit/cost-operations.test.ts holds it to that).
 */
import type { OperationId } from "#shared/api/index.ts";
import { client, createTenant } from "#test/support/http.ts";
import { ALL_TOKEN_PERMISSIONS, appKey, revealEverything } from "#test/support/tokens.ts";
import { call } from "../api-call.ts";
import { proxyHeaders, TRIVIAL_TRANSFORM } from "../bench/scenarios/proxy.ts";
import { luhnNumber } from "../fuzz/world.ts";
import { REACT_BODY, setUpReactor } from "./reactor.ts";

export interface CostContext {
  url: string;
  rootKey: string;
  /** A server answering every request 200 (a proxy's destination). */
  destinationUrl: string;
  /** Resolves once every queued job (asynchronous reactions) has run. */
  queueIdle(): Promise<void>;
}

/** Runs `work` as a measured part of a sample (requests outside it, set-up of that sample, are not counted). */
export type Measure = <T>(work: () => Promise<T>) => Promise<T>;

export interface Operation {
  name: string;
  /** The routes this operation's measurement stands for. */
  routes: OperationId[];
  /** Tokens each request handles (the batch routes), for the per-token figures. */
  tokensPerRequest?: number;
  /** Set-up once (unmeasured); answers one sample: its own set-up, then `measure` around what is measured. */
  prepare(ctx: CostContext): Promise<(index: number, measure: Measure) => Promise<void>>;
}

/** A Luhn-valid card number of its own for each index (a new value, as a real tokenize sends). */
export const cardNumber = (index: number) => luhnNumber(`4${String(index).padStart(14, "0")}`);
const card = (index: number) => ({
  type: "card",
  data: { number: cardNumber(index), expiration_month: 12, expiration_year: 2030 },
});

/** A new tenant and a private application holding every token permission, reading revealed. */
async function owner(ctx: CostContext) {
  const api = client(ctx.url);
  const tenant = await createTenant(api, ctx.rootKey, "Cost");
  const key = await appKey(api, tenant.managementKey, {
    type: "private",
    permissions: ALL_TOKEN_PERMISSIONS,
    rules: revealEverything,
  });
  return { managementKey: tenant.managementKey, key };
}

/** Creates `count` card tokens (numbers from `first`) with `extra` fields and answers their ids. */
async function tokens(ctx: CostContext, key: string, count: number, first: number, extra = {}) {
  const ids: string[] = [];
  for (let i = 0; i < count; i++)
    ids.push(
      (await call<{ id: string }>(ctx.url, "POST", "/tokens", key, { ...card(first + i), ...extra }, 201)).id,
    );
  return ids;
}

/** Index numbers far apart per operation, so no two operations tokenize the same card. */
let nextBlock = 0;
const block = () => {
  nextBlock += 1;
  return nextBlock * 1_000_000;
};

const SEARCH_INDEXES = { search_indexes: ["{{ data.number }}", "{{ data.number | last4 }}"] };
/** Tokens in a listed or searched tenant: a page of 20 is read from these. */
const LISTED_TOKENS = 60;
const BATCH = 25;

/** A single POST /tokens with `extra` fields. */
const createOperation = (name: string, extra: Record<string, unknown>): Operation => ({
  name,
  routes: ["createToken"],
  async prepare(ctx) {
    const { key } = await owner(ctx);
    const first = block();
    return (i, measure) =>
      measure(() => call(ctx.url, "POST", "/tokens", key, { ...card(first + i), ...extra }, 201));
  },
});

export const OPERATIONS: Operation[] = [
  createOperation("tokenize", {}),
  createOperation("tokenize, deduplicate_token (new value)", { deduplicate_token: true }),
  {
    name: "tokenize, deduplicate_token (existing value)",
    routes: ["createToken"],
    async prepare(ctx) {
      const { key } = await owner(ctx);
      const first = block();
      await tokens(ctx, key, 1, first, { deduplicate_token: true });
      return (_i, measure) =>
        measure(() =>
          call(ctx.url, "POST", "/tokens", key, { ...card(first), deduplicate_token: true }, 201),
        );
    },
  },
  createOperation("tokenize, 2 search indexes", SEARCH_INDEXES),
  {
    name: "read",
    routes: ["getToken"],
    async prepare(ctx) {
      const { key } = await owner(ctx);
      const [id] = await tokens(ctx, key, 1, block());
      return (_i, measure) => measure(() => call(ctx.url, "GET", `/tokens/${id}`, key, undefined, 200));
    },
  },
  {
    name: `list, page of 20 (GET /tokens, tenant of ${LISTED_TOKENS})`,
    routes: ["listTokens"],
    async prepare(ctx) {
      const { key } = await owner(ctx);
      await tokens(ctx, key, LISTED_TOKENS, block());
      return (_i, measure) => measure(() => call(ctx.url, "GET", "/tokens?size=20", key, undefined, 200));
    },
  },
  {
    name: "v2 list, page of 20",
    routes: ["listTokensV2"],
    async prepare(ctx) {
      const { key } = await owner(ctx);
      await tokens(ctx, key, LISTED_TOKENS, block());
      return (_i, measure) => measure(() => call(ctx.url, "GET", "/v2/tokens?size=20", key, undefined, 200));
    },
  },
  {
    name: "search, data: (1 match)",
    routes: ["searchTokens"],
    async prepare(ctx) {
      const { key } = await owner(ctx);
      const first = block();
      await tokens(ctx, key, LISTED_TOKENS, first, SEARCH_INDEXES);
      return (i, measure) =>
        measure(() =>
          call(
            ctx.url,
            "POST",
            "/v2/tokens/search",
            key,
            { query: `data:${cardNumber(first + (i % LISTED_TOKENS))}` },
            200,
          ),
        );
    },
  },
  {
    name: `POST /tokenize, ${BATCH} cards`,
    routes: ["tokenize"],
    tokensPerRequest: BATCH,
    async prepare(ctx) {
      const { key } = await owner(ctx);
      const first = block();
      return (i, measure) =>
        measure(() =>
          call(
            ctx.url,
            "POST",
            "/tokenize",
            key,
            Array.from({ length: BATCH }, (_, j) => card(first + i * BATCH + j)),
            201,
          ),
        );
    },
  },
  {
    name: `POST /detokenize, ${BATCH} tokens`,
    routes: ["detokenize"],
    tokensPerRequest: BATCH,
    async prepare(ctx) {
      const { key } = await owner(ctx);
      const ids = await tokens(ctx, key, BATCH, block());
      const body = Object.fromEntries(ids.map((id, j) => [`card${j}`, `{{ ${id} }}`]));
      return (_i, measure) => measure(() => call(ctx.url, "POST", "/detokenize", key, body, 200));
    },
  },
  {
    name: "PATCH (metadata)",
    routes: ["patchToken"],
    async prepare(ctx) {
      const { key } = await owner(ctx);
      const [id] = await tokens(ctx, key, 1, block());
      return (i, measure) =>
        measure(() =>
          call(ctx.url, "PATCH", `/tokens/${id}`, key, { metadata: { n: String(i) } }, 200, {
            "content-type": "application/merge-patch+json",
          }),
        );
    },
  },
  {
    name: "delete",
    routes: ["deleteToken"],
    async prepare(ctx) {
      const { key } = await owner(ctx);
      const first = block();
      return async (i, measure) => {
        const [id] = await tokens(ctx, key, 1, first + i);
        await measure(() => call(ctx.url, "DELETE", `/tokens/${id}`, key, undefined, 204));
      };
    },
  },
  proxyOperation("proxy call, no transform", undefined),
  proxyOperation("proxy call, request transform", TRIVIAL_TRANSFORM),
  {
    name: "react, synchronous (trivial formula)",
    routes: ["react"],
    async prepare(ctx) {
      const { path, key } = await reactor(ctx);
      return (_i, measure) => measure(() => call(ctx.url, "POST", path, key, REACT_BODY, 200));
    },
  },
  {
    name: "react-async + its run (queued)",
    routes: ["reactAsync"],
    async prepare(ctx) {
      const { path, key } = await reactor(ctx);
      const asyncPath = path.replace(/\/react$/, "/react-async");
      return (_i, measure) =>
        measure(async () => {
          await call(ctx.url, "POST", asyncPath, key, REACT_BODY, 202);
          await ctx.queueIdle();
        });
    },
  },
  {
    name: "session create",
    routes: ["createSession"],
    async prepare(ctx) {
      const { managementKey } = await owner(ctx);
      const publicKey = await appKey(client(ctx.url), managementKey, {
        type: "public",
        permissions: ["token:create"],
      });
      return (_i, measure) => measure(() => call(ctx.url, "POST", "/sessions", publicKey, undefined, 201));
    },
  },
  {
    name: "session authorize",
    routes: ["authorizeSession"],
    async prepare(ctx) {
      const { managementKey, key } = await owner(ctx);
      const publicKey = await appKey(client(ctx.url), managementKey, {
        type: "public",
        permissions: ["token:create"],
      });
      return async (_i, measure) => {
        const session = await call<{ nonce: string }>(
          ctx.url,
          "POST",
          "/sessions",
          publicKey,
          undefined,
          201,
        );
        await measure(() =>
          call(
            ctx.url,
            "POST",
            "/sessions/authorize",
            key,
            { nonce: session.nonce, permissions: ["token:read"] },
            200,
          ),
        );
      };
    },
  },
  {
    name: "audit read, page of 20 (GET /logs)",
    routes: ["listLogs"],
    async prepare(ctx) {
      const { key, managementKey } = await owner(ctx);
      await tokens(ctx, key, LISTED_TOKENS, block());
      return (_i, measure) =>
        measure(() => call(ctx.url, "GET", "/logs?size=20", managementKey, undefined, 200));
    },
  },
];

function proxyOperation(name: string, transform: string | undefined): Operation {
  return {
    name,
    routes: [
      "invokeProxyPost",
      ...(transform
        ? []
        : ([
            "invokeProxyGet",
            "invokeProxyGetPath",
            "invokeProxyPostPath",
            "invokeProxyPut",
            "invokeProxyPutPath",
            "invokeProxyPatch",
            "invokeProxyPatchPath",
            "invokeProxyDelete",
            "invokeProxyDeletePath",
          ] as const)),
    ],
    async prepare(ctx) {
      const { managementKey, key } = await owner(ctx);
      const [id] = await tokens(ctx, key, 1, block());
      const useKey = await appKey(client(ctx.url), managementKey, {
        type: "private",
        permissions: ["token:use"],
      });
      const proxy = await call<{ key: string }>(
        ctx.url,
        "POST",
        "/proxies",
        managementKey,
        {
          name,
          destination_url: `${ctx.destinationUrl}/charges`,
          ...(transform ? { request_transform: { code: transform } } : {}),
        },
        201,
      );
      const body = JSON.stringify({ card: `{{ ${id} }}` });
      return (_i, measure) =>
        measure(() => call(ctx.url, "POST", "/proxy", undefined, body, 200, proxyHeaders(proxy.key, useKey)));
    },
  };
}

async function reactor(ctx: CostContext) {
  const { managementKey } = await owner(ctx);
  const app = await call<{ id: string; key: string }>(
    ctx.url,
    "POST",
    "/applications",
    managementKey,
    { name: "cost use", type: "private", permissions: ["token:use"] },
    201,
  );
  const path = await setUpReactor(
    { serviceUrl: ctx.url, managementKey, applicationId: app.id, useKey: app.key },
    { name: "cost trivial" },
  );
  return { path, key: app.key };
}

const MANAGEMENT =
  "Management plane: a few calls per tenant per day, set-up rather than traffic; its cost per request is of the " +
  "order of a tokenize and never adds up to a line of the bill.";
const STATIC =
  "Static or health answers: no table, no key, no tenant data; an API Gateway request and a Lambda run.";

/** Routes with no measurement of their own, each with why. */
export const EXCLUDED: Partial<Record<OperationId, string>> = {
  healthz: STATIC,
  openapi: STATIC,
  receiptKey:
    "The deployment's public receipt key: one KMS GetPublicKey per warm function (then cached), no table, no tenant data.",
  elementsScript: STATIC,
  elementsFrameScript: STATIC,
  elementsFrame: STATIC,
  advanceTestClock: "Test clock only: refused unless the test clock is on, never in a deployed stack.",
  createTenant: MANAGEMENT,
  getSelfTenant: MANAGEMENT,
  deleteSelfTenant:
    'Once per tenant: a few writes, one signature, then the sweep\'s purge reads the whole table once (docs/security.md, "Tenant deletion").',
  setSelfTenantKmsKey:
    "Once per tenant or key change: a test GenerateDataKey/Decrypt, then one ReEncrypt per data key.",
  listTenantKeys: MANAGEMENT,
  rotateTenantKeys: MANAGEMENT,
  getRewrap: MANAGEMENT,
  destroyKeyVersion: MANAGEMENT,
  startRewrap:
    "Key custody: rare (after a rotation); what a rewrap costs per token is in operations.md (Key rotation and " +
    "rewrap) and its throughput in npm run bench (BENCH_SCENARIOS=rewrap).",
  createApplication: MANAGEMENT,
  listApplications: MANAGEMENT,
  getOwnApplication: MANAGEMENT,
  getApplication: MANAGEMENT,
  updateApplication: MANAGEMENT,
  deleteApplication: MANAGEMENT,
  createApplicationKey: MANAGEMENT,
  listApplicationKeys: MANAGEMENT,
  getApplicationKey: MANAGEMENT,
  deleteApplicationKey: MANAGEMENT,
  listEntityTypes: "Audit metadata: one query of the tenant's entity types, as GET /logs's first page costs.",
  openTransaction:
    "Token transactions: priced as the token writes they hold plus one transaction record write.",
  commitTransaction:
    "Token transactions: priced as the token writes they hold plus one transaction record write.",
  rollbackTransaction:
    "Token transactions: priced as the token writes they hold plus one transaction record write.",
  listMembers: MANAGEMENT,
  deleteMember: MANAGEMENT,
  createInvitation: MANAGEMENT,
  resendInvitation: MANAGEMENT,
  listInvitations: MANAGEMENT,
  getInvitation: MANAGEMENT,
  deleteInvitation: MANAGEMENT,
  invitationPage: MANAGEMENT,
  acceptInvitation: MANAGEMENT,
  createProxy: MANAGEMENT,
  listProxies: MANAGEMENT,
  getProxy: MANAGEMENT,
  replaceProxy: MANAGEMENT,
  patchProxy: MANAGEMENT,
  rotateProxyKey: MANAGEMENT,
  deleteProxy: MANAGEMENT,
  createFormula: MANAGEMENT,
  listFormulas: MANAGEMENT,
  getFormula: MANAGEMENT,
  replaceFormula: MANAGEMENT,
  deleteFormula: MANAGEMENT,
  createReactor: MANAGEMENT,
  listReactors: MANAGEMENT,
  getReactor: MANAGEMENT,
  replaceReactor: MANAGEMENT,
  patchReactor: MANAGEMENT,
  deleteReactor: MANAGEMENT,
  getReactionResult:
    "One read of the stored result plus its read entries: the read row's cost with the react-async result item.",
  getWebhookSecret: MANAGEMENT,
  rotateWebhookSecret: MANAGEMENT,
};
