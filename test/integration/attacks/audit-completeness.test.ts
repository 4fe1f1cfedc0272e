/**
 * Attack (an auditor's question): "who read this card?" A reactor run detokenized a card into its formula's
 * arguments, or answered a card its code tokenized, and the log held only "Reactor invoked": the card's own
 * history showed no read. Every route of the table is classified here as handing out token data or not; each
 * route that does is called through HTTP in every way it hands data out (read, list, PATCH and deduplication
 * answers, sessions, proxies, reactor args, code's `req.svc` calls, tokens a formula creates for its caller),
 * and must
 * 1. write one `read` entry for the token, naming who got its data, and
 * 2. fail closed: while the log refuses token `read` entries, the same call hands no data to anyone (the
 *    caller, the destination, the formula's code, a callback).
 * A route added to the table without a classification here fails the first test.
 */
import { describe, expect, it } from "vitest";
import { type OperationId, routeList } from "#shared/api/index.ts";
import type { LogEntry } from "#shared/domain/audit.ts";
import { client, createTenant, type HttpResponse } from "#test/support/http.ts";
import { useLocalServer } from "#test/support/local-server.ts";
import { useService } from "#test/support/service.ts";
import { revealEverything, type TokenBody, VISA } from "#test/support/tokens.ts";

process.env.SVC_CALLBACK_RETRY_BASE_SECONDS = "0.05";
const svc = useService({ allowPrivateDestinations: true });

/** Everything a destination or callback receiver got, as text: data must not reach it when logging fails. */
const received: string[] = [];
const partner = useLocalServer((req, res, body) => {
  received.push(`${JSON.stringify(req.headers)}\n${body.toString("utf8")}`);
  res.writeHead(200, { "content-type": "application/json" });
  res.end(JSON.stringify({ echoed: body.toString("utf8"), header: req.headers["x-card"] ?? null }));
});

const CARD = { number: VISA, expiration_month: 11, expiration_year: 2031 };

/** A tenant: a caller who may do everything with tokens (reveal), the card it holds, an application for code. */
async function world() {
  const api = client(svc.url);
  const tenant = await createTenant(api, svc.rootKey);
  const application = async (name: string) => {
    const res = await api.post<{ id: string; key: string }>("/applications", {
      key: tenant.managementKey,
      body: { name, type: "private", rules: revealEverything },
    });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    return res.body;
  };
  const caller = await application("caller");
  const code = await application("code");
  const card = await api.post<TokenBody>("/tokens", { key: caller.key, body: { type: "card", data: CARD } });
  expect(card.status).toBe(201);
  return { api, tenant, caller, code, cardId: card.body.id };
}
type World = Awaited<ReturnType<typeof world>>;

/** What a probe did: the answer, and whose read of which token the log must show. */
interface Probe {
  answer: HttpResponse<unknown>;
  reads: { tokenId: string; actorId?: string; actorType: string; message?: RegExp }[];
}
/** Runs a step that must succeed with the log working (the first request, whose answer a replay repeats). */
type Prelude = <T>(work: () => Promise<T>) => Promise<T>;
type ProbeRun = (w: World, prelude: Prelude) => Promise<Probe>;

/** `body` sent twice with one SVC-IDEMPOTENCY-KEY: the first call in the prelude, the replay as the probe. */
async function replayed(w: World, prelude: Prelude, method: string, path: string, body: unknown) {
  const send = () =>
    w.api.call(method, path, {
      key: w.caller.key,
      body,
      headers: {
        "svc-idempotency-key": "audit-replay",
        ...(method === "PATCH" ? { "content-type": "application/merge-patch+json" } : {}),
      },
    });
  const first = await prelude(send);
  expect(first.status, JSON.stringify(first.body)).toBeLessThan(300);
  return send();
}
const REPLAY = /idempotent replay/;

async function reactor(w: World, code: string) {
  const formula = await w.api.post<{ id: string }>("/reactor-formulas", {
    key: w.tenant.managementKey,
    body: { name: "probe", code },
  });
  expect(formula.status, JSON.stringify(formula.body)).toBe(201);
  const created = await w.api.post<{ id: string }>("/reactors", {
    key: w.tenant.managementKey,
    body: { name: "probe", formula: { id: formula.body.id }, application: { id: w.code.id } },
  });
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  return created.body.id;
}

/** A proxy to the partner that requires the caller's key; `extra` adds transforms. */
async function proxyKey(w: World, extra: Record<string, unknown> = {}) {
  const proxy = await w.api.post<{ key: string }>("/proxies", {
    key: w.tenant.managementKey,
    body: {
      name: "probe",
      destination_url: `${partner.url}/`,
      require_auth: true,
      application: { id: w.code.id },
      ...extra,
    },
  });
  expect(proxy.status, JSON.stringify(proxy.body)).toBe(201);
  return proxy.body.key;
}

/** A request transform that reads the card through `req.svc` and sends its number in a header. */
const SVC_TRANSFORM = (cardId: string) => ({
  request_transform: {
    code: `module.exports = async (req) => {
      const card = await req.svc.tokens.retrieve(${JSON.stringify(cardId)});
      return { body: req.args.body, headers: { ...req.args.headers, "x-card": card.data.number } };
    };`,
  },
});

/** The proxy route for `method` (`path`: /proxy or /proxy/{proxy+}), called as the caller. */
function proxyProbes(method: string, withPath: boolean): ProbeRun[] {
  const url = withPath ? "/proxy/charges" : "/proxy";
  const send = (w: World, key: string, body?: unknown) =>
    w.api.call(method, url, {
      key: w.caller.key,
      headers: { "svc-proxy-key": key },
      ...(body !== undefined ? { body } : {}),
    });
  // Detokenization of the body (every method that has one), and a transform's svc read (every method).
  const detokenized: ProbeRun = async (w) => ({
    answer: await send(w, await proxyKey(w), { card: `{{ ${w.cardId} | json: '$.number' }}` }),
    reads: [{ tokenId: w.cardId, actorId: w.caller.id, actorType: "application" }],
  });
  const svcRead: ProbeRun = async (w) => ({
    answer: await send(w, await proxyKey(w, SVC_TRANSFORM(w.cardId))),
    reads: [
      { tokenId: w.cardId, actorId: w.code.id, actorType: "application", message: /by the code of proxy/ },
    ],
  });
  return method === "GET" ? [svcRead] : [detokenized, svcRead];
}

/** A session authorized by the caller to read everything, revealed. */
async function sessionKey(w: World) {
  const pub = await w.api.post<{ key: string }>("/applications", {
    key: w.tenant.managementKey,
    body: { name: "browser", type: "public" },
  });
  const session = await w.api.post<{ session_key: string; nonce: string }>("/sessions", {
    key: pub.body.key,
  });
  const authorized = await w.api.post("/sessions/authorize", {
    key: w.caller.key,
    body: { nonce: session.body.nonce, rules: revealEverything },
  });
  expect(authorized.status, JSON.stringify(authorized.body)).toBe(200);
  return session.body.session_key;
}

/** Each route of the table: the ways it hands out token data, or why it never does. */
const ROUTES: Record<OperationId, ProbeRun[] | string> = {
  healthz: "answers readiness only",
  openapi: "answers the route table's description",
  receiptKey: "answers the deployment's public receipt key",
  advanceTestClock: "moves the test clock (root key, local only)",
  createTenant: "answers the new tenant and its management key",
  getSelfTenant: "answers the tenant record",
  deleteSelfTenant: "answers the deletion receipt (ids, times, key versions)",
  setSelfTenantKmsKey: "answers the key ARN and a count",
  listTenantKeys: "answers key versions and token counts",
  rotateTenantKeys: "answers key versions and token counts",
  startRewrap: "answers the job's progress (its pages re-seal tokens in the worker, never answering data)",
  getRewrap: "answers the job's progress",
  destroyKeyVersion: "answers nothing",
  createApplication: "answers the application and its key",
  listApplications: "answers applications (permissions and rules)",
  getOwnApplication: "answers the caller's application",
  getApplication: "answers an application",
  updateApplication: "answers an application",
  deleteApplication: "answers nothing",
  createApplicationKey: "answers a key",
  listApplicationKeys: "answers key ids",
  getApplicationKey: "answers a key id",
  deleteApplicationKey: "answers nothing",
  listLogs: "answers entries, which never hold data",
  listEntityTypes: "answers a fixed list",
  createToken: [
    // Deduplication hands back an existing token: the caller did not give that token's data (cvc, ...).
    async (w) => ({
      answer: await w.api.post("/tokens", {
        key: w.caller.key,
        body: { type: "card", data: CARD, deduplicate_token: true },
      }),
      reads: [{ tokenId: w.cardId, actorId: w.caller.id, actorType: "application" }],
    }),
    // The same answer replayed (SVC-IDEMPOTENCY-KEY): the token is presented again, and read again.
    async (w, prelude) => ({
      answer: await replayed(w, prelude, "POST", "/tokens", {
        type: "card",
        data: CARD,
        deduplicate_token: true,
      }),
      reads: [{ tokenId: w.cardId, actorId: w.caller.id, actorType: "application", message: REPLAY }],
    }),
  ],
  listTokens: [
    async (w) => ({
      answer: await w.api.get(`/tokens?id=${w.cardId}`, { key: w.caller.key }),
      reads: [{ tokenId: w.cardId, actorId: w.caller.id, actorType: "application" }],
    }),
    async (w) => ({
      answer: await w.api.get("/tokens", { key: await sessionKey(w) }),
      reads: [{ tokenId: w.cardId, actorType: "session" }],
    }),
  ],
  getToken: [
    async (w) => ({
      answer: await w.api.get(`/tokens/${w.cardId}`, { key: w.caller.key }),
      reads: [{ tokenId: w.cardId, actorId: w.caller.id, actorType: "application" }],
    }),
    async (w) => ({
      answer: await w.api.get(`/tokens/${w.cardId}`, { key: await sessionKey(w) }),
      reads: [{ tokenId: w.cardId, actorType: "session" }],
    }),
  ],
  patchToken: [
    async (w) => ({
      answer: await w.api.patch(`/tokens/${w.cardId}`, {
        key: w.caller.key,
        body: { metadata: { note: "x" } },
        headers: { "content-type": "application/merge-patch+json" },
      }),
      reads: [{ tokenId: w.cardId, actorId: w.caller.id, actorType: "application" }],
    }),
    async (w, prelude) => ({
      answer: await replayed(w, prelude, "PATCH", `/tokens/${w.cardId}`, { metadata: { note: "y" } }),
      reads: [{ tokenId: w.cardId, actorId: w.caller.id, actorType: "application", message: REPLAY }],
    }),
  ],
  deleteToken: "answers nothing (204)",
  tokenize: [
    // Deduplication in a batch hands back an existing token, as POST /tokens does.
    async (w) => ({
      answer: await w.api.post("/tokenize", {
        key: w.caller.key,
        body: [
          { type: "token", data: "new" },
          { type: "card", data: CARD, deduplicate_token: true },
        ],
      }),
      reads: [{ tokenId: w.cardId, actorId: w.caller.id, actorType: "application" }],
    }),
    async (w, prelude) => ({
      answer: await replayed(w, prelude, "POST", "/tokenize", {
        card: { type: "card", data: CARD, deduplicate_token: true },
      }),
      reads: [{ tokenId: w.cardId, actorId: w.caller.id, actorType: "application", message: REPLAY }],
    }),
  ],
  detokenize: [
    async (w) => ({
      answer: await w.api.post("/detokenize", {
        key: w.caller.key,
        body: { number: `{{ ${w.cardId} | json: '$.number' }}` },
      }),
      reads: [{ tokenId: w.cardId, actorId: w.caller.id, actorType: "application" }],
    }),
    async (w) => ({
      answer: await w.api.post("/detokenize", { key: await sessionKey(w), body: [`{{ ${w.cardId} }}`] }),
      reads: [{ tokenId: w.cardId, actorType: "session" }],
    }),
  ],
  listTokensV2: [
    async (w) => ({
      answer: await w.api.get("/v2/tokens?type=card", { key: w.caller.key }),
      reads: [{ tokenId: w.cardId, actorId: w.caller.id, actorType: "application" }],
    }),
    async (w) => ({
      answer: await w.api.get("/v2/tokens", { key: await sessionKey(w) }),
      reads: [{ tokenId: w.cardId, actorType: "session" }],
    }),
  ],
  searchTokens: [
    async (w) => ({
      answer: await w.api.post("/v2/tokens/search", { key: w.caller.key, body: { query: "type:card" } }),
      reads: [{ tokenId: w.cardId, actorId: w.caller.id, actorType: "application" }],
    }),
  ],
  openTransaction: "answers the transaction's id",
  commitTransaction: "answers nothing",
  rollbackTransaction: "answers nothing",
  createSession: "answers a session key and nonce",
  authorizeSession: "answers nothing",
  listMembers: "answers members",
  deleteMember: "answers nothing",
  createInvitation: "answers an invitation",
  resendInvitation: "answers an invitation",
  listInvitations: "answers invitations",
  getInvitation: "answers an invitation",
  deleteInvitation: "answers nothing",
  acceptInvitation: "answers the new member's key",
  invitationPage: "serves the invitation accept page (static; its call is acceptInvitation)",
  createProxy: "answers the proxy's configuration and key",
  listProxies: "answers configurations",
  getProxy: "answers a configuration",
  replaceProxy: "answers a configuration",
  patchProxy: "answers nothing",
  rotateProxyKey: "answers the proxy's configuration and its new key",
  deleteProxy: "answers nothing",
  invokeProxyGet: proxyProbes("GET", false),
  invokeProxyGetPath: proxyProbes("GET", true),
  invokeProxyPost: proxyProbes("POST", false),
  invokeProxyPostPath: proxyProbes("POST", true),
  invokeProxyPut: proxyProbes("PUT", false),
  invokeProxyPutPath: proxyProbes("PUT", true),
  invokeProxyPatch: proxyProbes("PATCH", false),
  invokeProxyPatchPath: proxyProbes("PATCH", true),
  invokeProxyDelete: proxyProbes("DELETE", false),
  invokeProxyDeletePath: proxyProbes("DELETE", true),
  createFormula: "answers code",
  listFormulas: "answers code",
  getFormula: "answers code",
  replaceFormula: "answers code",
  deleteFormula: "answers nothing",
  createReactor: "answers a configuration",
  listReactors: "answers configurations",
  getReactor: "answers a configuration",
  replaceReactor: "answers a configuration",
  patchReactor: "answers nothing",
  deleteReactor: "answers nothing",
  react: [
    // The caller's detokenized args are handed to the formula's code (which answers them here).
    async (w) => ({
      answer: await w.api.post(
        `/reactors/${await reactor(w, "module.exports = async (req) => ({ raw: req.args });")}/react`,
        { key: w.caller.key, body: { args: { card: `{{ ${w.cardId} }}` } } },
      ),
      reads: [{ tokenId: w.cardId, actorId: w.caller.id, actorType: "application" }],
    }),
    // The same, queued: the args are detokenized (and logged) now, run later, answered to a callback.
    async (w) => {
      const id = await reactor(w, "module.exports = async (req) => ({ raw: req.args });");
      const answer = await w.api.post(`/reactors/${id}/react`, {
        key: w.caller.key,
        body: { args: { card: `{{ ${w.cardId} }}` }, callback_url: `${partner.url}/callback` },
      });
      return { answer, reads: [{ tokenId: w.cardId, actorId: w.caller.id, actorType: "application" }] };
    },
    // The code reads the card through req.svc, as the reactor's application.
    async (w) => ({
      answer: await w.api.post(
        `/reactors/${await reactor(
          w,
          `module.exports = async (req) => ({ raw: await req.svc.tokens.retrieve(${JSON.stringify(w.cardId)}) });`,
        )}/react`,
        { key: w.caller.key, body: { args: {} } },
      ),
      reads: [
        {
          tokenId: w.cardId,
          actorId: w.code.id,
          actorType: "application",
          message: /by the code of reactor/,
        },
      ],
    }),
    // The code tokenizes a card and the caller is shown it: deduplicated, it is the existing card.
    async (w) => ({
      answer: await w.api.post(
        `/reactors/${await reactor(
          w,
          `module.exports = async () => ({ tokenize: { card: ${JSON.stringify({ type: "card", data: CARD, deduplicate_token: true })} } });`,
        )}/react`,
        { key: w.caller.key, body: { args: {} } },
      ),
      reads: [{ tokenId: w.cardId, actorId: w.caller.id, actorType: "application" }],
    }),
    // A replayed reaction hands the data its args were computed from out again.
    async (w, prelude) => {
      const id = await reactor(w, "module.exports = async (req) => ({ raw: req.args });");
      const answer = await replayed(w, prelude, "POST", `/reactors/${id}/react`, {
        args: { card: `{{ ${w.cardId} }}` },
      });
      return {
        answer,
        reads: [{ tokenId: w.cardId, actorId: w.caller.id, actorType: "application", message: REPLAY }],
      };
    },
  ],
  reactAsync: [
    // The caller's detokenized args are handed to the code, queued (here the code sends them to the partner).
    async (w) => {
      const id = await reactor(
        w,
        `module.exports = async (req) => {
          await fetch(${JSON.stringify(`${partner.url}/from-code`)}, { method: "POST", body: JSON.stringify(req.args) });
          return { raw: { sent: true } };
        };`,
      );
      const answer = await w.api.post(`/reactors/${id}/react-async`, {
        key: w.caller.key,
        body: { args: { card: `{{ ${w.cardId} }}` } },
      });
      return { answer, reads: [{ tokenId: w.cardId, actorId: w.caller.id, actorType: "application" }] };
    },
  ],
  getReactionResult: [
    // A result holds what the code made of the args' data: reading it hands that data out again.
    async (w, prelude) => {
      const id = await reactor(w, "module.exports = async (req) => ({ raw: req.args });");
      const requestId = await prelude(async () => {
        const accepted = await w.api.post<{ asyncReactorRequestId: string }>(`/reactors/${id}/react-async`, {
          key: w.caller.key,
          body: { args: { card: `{{ ${w.cardId} }}` } },
        });
        const rid = accepted.body.asyncReactorRequestId;
        // Waits on the store, not the route: only the probe's own GET may write the result's read entries.
        const stored = () => svc.service.deps.reactors.reactionRecord(w.tenant.tenantId, rid);
        for (let waited = 0; !(await stored()) && waited < 10_000; waited += 50)
          await new Promise((resolve) => setTimeout(resolve, 50));
        return rid;
      });
      const answer = await w.api.get(`/reactors/${id}/results/${requestId}`, { key: w.caller.key });
      return {
        answer,
        reads: [
          {
            tokenId: w.cardId,
            actorId: w.caller.id,
            actorType: "application",
            message: /react-async result/,
          },
        ],
      };
    },
  ],
  elementsScript: "serves the Elements script (a static file)",
  elementsFrameScript: "serves the Elements frame's script (a static file)",
  elementsFrame: "serves the Elements frame page (static; its token calls are the tokens routes above)",
  getWebhookSecret: "answers the tenant's webhook secret",
  rotateWebhookSecret: "answers the tenant's webhook secret",
};

const handsOut = Object.entries(ROUTES).flatMap(([operationId, probes]) =>
  typeof probes === "string"
    ? []
    : probes.map((probe, index) => [`${operationId} #${index + 1}`, probe] as const),
);

const isTokenRead = (entry: Pick<LogEntry, "entity_type" | "operation">) =>
  ["card", "bank", "token"].includes(entry.entity_type) && entry.operation === "read";

/**
 * Runs `work` while the audit log refuses every token `read` entry (other entries are written), except inside
 * the prelude it is given.
 */
async function whileTokenReadsFail<T>(work: (prelude: Prelude) => Promise<T>): Promise<T> {
  const auditLog = svc.service.deps.auditLog;
  const original = auditLog.append.bind(auditLog);
  let failing = true;
  auditLog.append = async (entries) => {
    if (failing && entries.some(isTokenRead)) throw new Error("the audit log is down");
    await original(entries);
  };
  const prelude: Prelude = async (step) => {
    failing = false;
    try {
      return await step();
    } finally {
      failing = true;
    }
  };
  try {
    return await work(prelude);
  } finally {
    auditLog.append = original;
  }
}

const leaks = (text: string) => text.includes(VISA);

describe("every route of the table is classified", () => {
  it("as handing out token data (with its probes) or not (with why)", () => {
    const classified = Object.keys(ROUTES).sort();

    expect(classified).toEqual(routeList.map((route) => route.operationId).sort());
  });
});

describe.each(handsOut)("%s", (_, probe) => {
  it("writes the token's read entry, naming who got the data", async () => {
    const w = await world();
    const before = received.length;

    const { answer, reads } = await probe(w, (step) => step());
    // The data did leave (to the caller, a destination, or a queued run's callback receiver).
    const left = () => leaks(JSON.stringify(answer.body)) || received.slice(before).some(leaks);
    for (let waited = 0; !left() && waited < 10_000; waited += 50)
      await new Promise((resolve) => setTimeout(resolve, 50));

    expect(answer.status, JSON.stringify(answer.body)).toBeLessThan(300);
    expect(left()).toBe(true);
    for (const read of reads) {
      const logs = await w.api.get<{ data: LogEntry[] }>(`/logs?entity_id=${read.tokenId}&size=100`, {
        key: w.tenant.managementKey,
      });
      const entries = logs.body.data.filter(
        (entry) =>
          isTokenRead(entry) &&
          entry.actor_type === read.actorType &&
          (read.actorId === undefined || entry.actor_id === read.actorId) &&
          (read.message === undefined || read.message.test(entry.message)),
      );
      expect(
        entries,
        JSON.stringify(logs.body.data.map((e) => [e.operation, e.actor_id, e.message])),
      ).not.toEqual([]);
    }
  });

  it("hands no data to anyone when that entry cannot be written", async () => {
    const w = await world();
    // What the partner got outside the prelude (which runs with the log working) is what counts.
    let before = received.length;

    const { answer } = await whileTokenReadsFail((prelude) =>
      probe(w, async (step) => {
        const done = await prelude(step);
        before = received.length;
        return done;
      }),
    );
    // A queued reaction would run now: give it the time to (not) reach the callback receiver.
    await new Promise((resolve) => setTimeout(resolve, 200));

    expect(answer.status).toBeGreaterThanOrEqual(500);
    expect(leaks(JSON.stringify(answer.body))).toBe(false);
    expect(received.slice(before).filter(leaks)).toEqual([]);
  });
});
