import { describe, expect, it } from "vitest";
import type { AuditLogStore } from "#shared/ports/stores.ts";
import { client, createTenant } from "#test/support/http.ts";
import { useLocalServer } from "#test/support/local-server.ts";
import { useService } from "#test/support/service.ts";
import { ALL_TOKEN_PERMISSIONS, appKey, type TokenBody, VISA } from "#test/support/tokens.ts";

/**
 * The proxy's audit entries are written before anything detokenized leaves, also when this process knows the
 * tokens' types and writes the entries while the tokens are read (shared/domain/proxies/audit-before-forward.ts).
 */
const svc = useService({ allowPrivateDestinations: true });

const received: string[] = [];
const destination = useLocalServer((_req, res, body) => {
  received.push(body.toString("utf8"));
  res.writeHead(200, { "content-type": "application/json" });
  res.end("{}");
});

interface ProxyAnswer {
  proxy_error?: { status: number; detail: string; title: string };
}
interface LogPage {
  data: { operation: string; message: string; entity_type: string }[];
}

async function setup() {
  const api = client(svc.url);
  const { managementKey } = await createTenant(api, svc.rootKey);
  const manager = await appKey(api, managementKey, { type: "private", permissions: ALL_TOKEN_PERMISSIONS });
  const user = await appKey(api, managementKey, { type: "private", permissions: ["token:use"] });
  const bankOnly = await appKey(api, managementKey, {
    type: "private",
    rules: [{ priority: 1, container: "/bank/", transform: "reveal", permissions: ["token:use"] }],
  });
  const proxy = await api.post<{ id: string; key: string }>("/proxies", {
    key: managementKey,
    body: { name: "audited", destination_url: `${destination.url}/` },
  });
  const card = await api.post<TokenBody>("/tokens", {
    key: manager,
    body: { type: "card", data: { number: VISA, expiration_month: 4, expiration_year: 2031 } },
  });
  const send = (key: string, tokenId: string) =>
    api.post<ProxyAnswer>("/proxy/charges", {
      key,
      headers: { "svc-proxy-key": proxy.body.key },
      body: { card: `{{ ${tokenId} }}` },
    });
  const logsOf = async (entityId: string) =>
    (await api.get<LogPage>(`/logs?entity_id=${entityId}`, { key: managementKey })).body.data;
  return {
    api,
    managementKey,
    manager,
    user,
    bankOnly,
    proxyId: proxy.body.id,
    card: card.body,
    send,
    logsOf,
  };
}

/** Replaces the audit log's append for the duration of `run`. */
async function withAuditAppend<T>(append: AuditLogStore["append"], run: () => Promise<T>): Promise<T> {
  const auditLog = svc.service.deps.auditLog;
  const original = auditLog.append.bind(auditLog);
  auditLog.append = append;
  try {
    return await run();
  } finally {
    auditLog.append = original;
  }
}

describe("proxy audit entries before forwarding", () => {
  it("forwards nothing when the entries cannot be written, for tokens read before and for new ones", async () => {
    const { send, user, card, manager, api } = await setup();
    const warm = await send(user, card.id);
    const fresh = await api.post<TokenBody>("/tokens", {
      key: manager,
      body: { type: "card", data: { number: VISA, expiration_month: 5, expiration_year: 2032 } },
    });
    const before = received.length;

    const [known, unknown] = await withAuditAppend(
      async () => {
        throw new Error("log store down");
      },
      async () => [await send(user, card.id), await send(user, fresh.body.id)],
    );

    expect(warm.status).toBe(200);
    for (const answer of [known, unknown]) {
      expect(answer.status).toBe(500);
      expect(JSON.stringify(answer.body)).not.toContain(VISA);
    }
    expect(received.length).toBe(before);
  });

  it("forwards only after a slow audit write has finished, when it ran beside the token read", async () => {
    const { send, user, card } = await setup();
    await send(user, card.id);
    const before = received.length;
    let sentDuringWrite = -1;
    const auditLog = svc.service.deps.auditLog;
    const original = auditLog.append.bind(auditLog);

    const answer = await withAuditAppend(
      async (...entries: Parameters<typeof original>) => {
        await new Promise((resolve) => setTimeout(resolve, 300));
        sentDuringWrite = received.length - before;
        await original(...entries);
      },
      () => send(user, card.id),
    );

    expect(answer.status).toBe(200);
    expect(sentDuringWrite).toBe(0);
    expect(received.length).toBe(before + 1);
  });

  it("answers a refused read as before, and logs that it was refused when its entries were written ahead", async () => {
    const { send, user, bankOnly, manager, card, api, logsOf, proxyId } = await setup();
    const other = await api.post<TokenBody>("/tokens", {
      key: manager,
      body: { type: "card", data: { number: VISA, expiration_month: 6, expiration_year: 2033 } },
    });
    // Refused before this process has read the token: nothing is logged ahead.
    const cold = await send(bankOnly, other.body.id);
    // Refused after another caller's read: the entries were written ahead.
    await send(user, card.id);
    const before = received.length;
    const warm = await send(bankOnly, card.id);
    const deleted = await api.delete(`/tokens/${card.id}`, { key: manager });
    const gone = await send(user, card.id);

    expect(cold.status).toBe(403);
    expect(warm.status).toBe(403);
    expect(warm.body.proxy_error?.title).toBe(cold.body.proxy_error?.title);
    expect(warm.body.proxy_error?.detail).toBe(cold.body.proxy_error?.detail.replace(other.body.id, card.id));
    expect(deleted.status).toBe(204);
    expect(gone.status).toBe(400);
    expect(gone.body.proxy_error?.status).toBe(400);
    expect(received.length).toBe(before);
    expect((await logsOf(other.body.id)).filter((entry) => entry.operation === "read")).toEqual([]);
    const refusals = (await logsOf(card.id)).filter((entry) => entry.message.includes("refused"));
    expect(refusals).toHaveLength(2);
    expect(refusals.every((entry) => entry.entity_type === "card")).toBe(true);
    const proxyRefusals = (await logsOf(proxyId)).filter((entry) => entry.message.includes("refused"));
    expect(proxyRefusals).toHaveLength(2);
  });
});
