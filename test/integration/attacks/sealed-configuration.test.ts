import { randomUUID } from "node:crypto";
import { GetCommand, UpdateCommand } from "@aws-sdk/lib-dynamodb";
import { describe, expect, it } from "vitest";
import { AuditItems } from "#shared/adapters/dynamodb/audit-items.ts";
import { DynamoProxyStore } from "#shared/adapters/dynamodb/proxy-store.ts";
import { DynamoReactorStore } from "#shared/adapters/dynamodb/reactor-store.ts";
import { auditEntry } from "#shared/domain/audit-entry.ts";
import { SHORT_LIVED_SEALED_SECONDS } from "#shared/domain/keys/destroy-window.ts";
import type { StoredProxy } from "#shared/domain/proxies/proxy.ts";
import type { StoredReactor } from "#shared/domain/reactors/model.ts";
import { type Client, client, createTenant } from "#test/support/http.ts";
import { rewrapToEnd } from "#test/support/keys.ts";
import { useLocalServer } from "#test/support/local-server.ts";
import { useService } from "#test/support/service.ts";
import { itemsNaming, scanTable } from "#test/support/table-scan.ts";
import { application } from "#test/support/tokens.ts";

/**
 * Attack (review of 27 Nov 2026): a proxy's or reactor's `configuration` (where a partner's API key usually goes)
 * was stored as a plain map: readable in the table, its backups and the DynamoDB Local file, and left there by key
 * rotation and destruction. It is sealed now as a proxy's key is (bound to the tenant, the record and the field),
 * opened where it is read (GET, the proxy's transforms, a reactor's code), and re-sealed by a rewrap, which also
 * seals the plain maps of items written before; a key version is not destroyed while one is sealed under it.
 */
const svc = useService({ allowPrivateDestinations: true });
const mergePatch = { "content-type": "application/merge-patch+json" };

const received: unknown[] = [];
const destination = useLocalServer((_req, res, body) => {
  received.push(JSON.parse(body.toString() || "null"));
  res.writeHead(200, { "content-type": "application/json" });
  res.end(JSON.stringify({ ok: true }));
});

/** Both transforms hand the configuration on: to the destination, and in the proxy's answer. */
const TRANSFORMS = {
  request_transform: {
    code: `module.exports = async (req) => ({ body: { configuration: req.configuration }, headers: { "content-type": "application/json" } });`,
  },
  response_transform: {
    code: `module.exports = async (req) => ({ body: { configuration: req.configuration }, headers: { "content-type": "application/json" } });`,
  },
};
const ECHO = "module.exports = async (req) => ({ raw: { configuration: req.configuration } });";

const secret = () => `sk_live_${randomUUID().replace(/-/g, "")}`;

async function world() {
  const api = client(svc.url);
  const { tenantId, managementKey: member } = await createTenant(api, svc.rootKey);
  const app = await application(api, member, { type: "private", permissions: ["token:use"] });
  return { api, member, tenantId, app };
}

type World = Awaited<ReturnType<typeof world>>;

async function createProxy(w: World, configuration: Record<string, unknown>) {
  const res = await w.api.post<{ id: string; key: string }>("/proxies", {
    key: w.member,
    body: {
      name: "partner",
      destination_url: destination.url,
      application: { id: w.app.id },
      configuration,
      ...TRANSFORMS,
    },
  });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body;
}

async function createReactor(w: World, configuration: Record<string, unknown>) {
  const res = await w.api.post<{ id: string }>("/reactors", {
    key: w.member,
    body: { name: "echo", code: ECHO, configuration, application: { id: w.app.id } },
  });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body;
}

/** What the proxy's transforms read as their configuration: what the destination got, and what it answered. */
async function seenByTransforms(w: World, proxyKey: string) {
  const res = await w.api.post<{ configuration: unknown }>("/proxy/charge", {
    key: w.app.key,
    headers: { "svc-proxy-key": proxyKey },
    body: { amount: 1 },
  });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return { sent: received.at(-1), answered: res.body };
}

async function seenByReactor(w: World, reactorId: string) {
  const res = await w.api.post<{ raw: { configuration: unknown } }>(`/reactors/${reactorId}/react`, {
    key: w.app.key,
    body: { args: {} },
  });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body.raw.configuration;
}

const keyOf = (tenantId: string, kind: "PROXY" | "REACTOR", id: string) => ({
  PK: `TENANT#${tenantId}`,
  SK: `${kind}#${id}`,
});

async function rawItem(tenantId: string, kind: "PROXY" | "REACTOR", id: string) {
  const { dynamo, config } = svc.service.deps;
  const out = await dynamo.send(
    new GetCommand({ TableName: config.tableName, Key: keyOf(tenantId, kind, id), ConsistentRead: true }),
  );
  if (!out.Item) throw new Error(`no ${kind} item ${id}`);
  return out.Item;
}

/** The item holds its configuration sealed (under `keyId` when given), nothing of it in plaintext. */
async function expectSealed(
  tenantId: string,
  kind: "PROXY" | "REACTOR",
  id: string,
  values: string[],
  keyId?: string,
) {
  const item = await rawItem(tenantId, kind, id);
  expect(item).not.toHaveProperty("configuration");
  expect(String(item.sealed_configuration)).toMatch(/^v1\.k\d+\./);
  if (keyId) expect(String(item.sealed_configuration).split(".")[1]).toBe(keyId);
  for (const value of values) expect(JSON.stringify(item)).not.toContain(value);
}

/** Nothing anywhere in the table names the values (audit entries, key lookups, idempotency records included). */
async function expectNowhereInTable(values: string[]) {
  const items = await scanTable(svc);
  for (const value of values) expect(itemsNaming(items, value)).toEqual([]);
}

/** Turns the item into one written before configurations were sealed: a plain map, nothing sealed. */
async function makeLegacy(
  tenantId: string,
  kind: "PROXY" | "REACTOR",
  id: string,
  configuration: Record<string, unknown>,
) {
  const { dynamo, config } = svc.service.deps;
  await dynamo.send(
    new UpdateCommand({
      TableName: config.tableName,
      Key: keyOf(tenantId, kind, id),
      UpdateExpression: "SET configuration = :plain REMOVE sealed_configuration",
      ExpressionAttributeValues: { ":plain": configuration },
    }),
  );
  expect((await rawItem(tenantId, kind, id)).configuration).toEqual(configuration);
}

async function rotate(api: Client, mgt: string) {
  const rotated = await api.post<{ current: number }>("/tenants/self/keys/rotate", { key: mgt });
  expect(rotated.status, JSON.stringify(rotated.body)).toBe(200);
  return rotated.body.current;
}

const systemAudit = (tenantId: string, entityType: "proxy" | "reactor", entityId: string) =>
  auditEntry(
    svc.service.deps.clock.now(),
    { type: "system" },
    { tenantId, entityType, entityId, operation: "update", message: "test re-seal" },
  );

describe("attack: a proxy's or reactor's configuration in plaintext at rest", () => {
  it("a proxy's configuration is stored sealed only after create, PUT and PATCH; GET and both transforms still read it", async () => {
    const w = await world();
    const [first, second, third] = [secret(), secret(), secret()];
    const proxy = await createProxy(w, { api_key: first });
    await expectSealed(w.tenantId, "PROXY", proxy.id, [first]);
    await expectNowhereInTable([first]);
    const created = await w.api.get<{ configuration: unknown }>(`/proxies/${proxy.id}`, { key: w.member });
    expect(created.body.configuration).toEqual({ api_key: first });
    expect(await seenByTransforms(w, proxy.key)).toEqual({
      sent: { configuration: { api_key: first } },
      answered: { configuration: { api_key: first } },
    });

    const put = await w.api.put<{ configuration: unknown }>(`/proxies/${proxy.id}`, {
      key: w.member,
      body: {
        name: "partner",
        destination_url: destination.url,
        application: { id: w.app.id },
        configuration: { api_key: second, region: "eu" },
        ...TRANSFORMS,
      },
    });
    expect(put.status, JSON.stringify(put.body)).toBe(200);
    expect(put.body.configuration).toEqual({ api_key: second, region: "eu" });
    await expectSealed(w.tenantId, "PROXY", proxy.id, [first, second, "region"]);

    const patched = await w.api.patch(`/proxies/${proxy.id}`, {
      key: w.member,
      headers: mergePatch,
      body: { configuration: { webhook_secret: third, region: null } },
    });
    expect(patched.status, JSON.stringify(patched.body)).toBe(204);
    await expectSealed(w.tenantId, "PROXY", proxy.id, [second, third, "webhook_secret"]);
    await expectNowhereInTable([first, second, third]);
    const read = await w.api.get<{ configuration: unknown }>(`/proxies/${proxy.id}`, { key: w.member });
    expect(read.body.configuration).toEqual({ api_key: second, webhook_secret: third });
    const listed = await w.api.get<{ data: { configuration: unknown }[] }>("/proxies", { key: w.member });
    expect(listed.body.data.map((p) => p.configuration)).toEqual([
      { api_key: second, webhook_secret: third },
    ]);
    expect((await seenByTransforms(w, proxy.key)).sent).toEqual({
      configuration: { api_key: second, webhook_secret: third },
    });
  });

  it("a reactor's configuration is stored sealed only after create, PUT and PATCH; GET and its code still read it", async () => {
    const w = await world();
    const [first, second, third] = [secret(), secret(), secret()];
    const reactor = await createReactor(w, { SERVICE_API_KEY: first });
    await expectSealed(w.tenantId, "REACTOR", reactor.id, [first, "SERVICE_API_KEY"]);
    await expectNowhereInTable([first]);
    expect(await seenByReactor(w, reactor.id)).toEqual({ SERVICE_API_KEY: first });

    const put = await w.api.put<{ configuration: unknown }>(`/reactors/${reactor.id}`, {
      key: w.member,
      body: { name: "echo", configuration: { SERVICE_API_KEY: second, retries: 3 } },
    });
    expect(put.status, JSON.stringify(put.body)).toBe(200);
    expect(put.body.configuration).toEqual({ SERVICE_API_KEY: second, retries: 3 });
    await expectSealed(w.tenantId, "REACTOR", reactor.id, [first, second]);

    const patched = await w.api.patch(`/reactors/${reactor.id}`, {
      key: w.member,
      headers: mergePatch,
      body: { configuration: { OTHER_KEY: third } },
    });
    expect(patched.status, JSON.stringify(patched.body)).toBe(204);
    await expectSealed(w.tenantId, "REACTOR", reactor.id, [second, third, "OTHER_KEY"]);
    await expectNowhereInTable([first, second, third]);
    const expected = { SERVICE_API_KEY: second, retries: 3, OTHER_KEY: third };
    const read = await w.api.get<{ configuration: unknown }>(`/reactors/${reactor.id}`, { key: w.member });
    expect(read.body.configuration).toEqual(expected);
    const listed = await w.api.get<{ data: { configuration: unknown }[] }>("/reactors", { key: w.member });
    expect(listed.body.data.map((r) => r.configuration)).toEqual([expected]);
    expect(await seenByReactor(w, reactor.id)).toEqual(expected);
  });

  it("a sealed configuration moved to another proxy or reactor does not open there", async () => {
    const w = await world();
    const [one, other] = [await createProxy(w, { k: secret() }), await createProxy(w, { k: secret() })];
    const [r1, r2] = [await createReactor(w, { k: secret() }), await createReactor(w, { k: secret() })];
    const { dynamo, config } = svc.service.deps;
    type Kind = "PROXY" | "REACTOR";
    const move = async (from: [Kind, string], to: [Kind, string]) => {
      const sealed = (await rawItem(w.tenantId, ...from)).sealed_configuration;
      expect(sealed).toEqual(expect.any(String));
      await dynamo.send(
        new UpdateCommand({
          TableName: config.tableName,
          Key: keyOf(w.tenantId, ...to),
          UpdateExpression: "SET sealed_configuration = :sealed",
          ConditionExpression: "attribute_exists(PK)",
          ExpressionAttributeValues: { ":sealed": sealed },
        }),
      );
    };
    await move(["PROXY", one.id], ["PROXY", other.id]);
    await move(["REACTOR", r1.id], ["REACTOR", r2.id]);
    // A reactor's blob in a proxy (another field) does not open either.
    await move(["REACTOR", r1.id], ["PROXY", one.id]);

    for (const path of [`/proxies/${other.id}`, `/proxies/${one.id}`, `/reactors/${r2.id}`])
      expect((await w.api.get(path, { key: w.member })).status, path).toBe(500);
    expect((await w.api.get(`/reactors/${r1.id}`, { key: w.member })).status).toBe(200);
  });

  it("items written before with a plain map keep working, are sealed by their next write and by a rewrap, which leaves no plain configuration behind", async () => {
    const w = await world();
    const values = { p1: secret(), p2: secret(), r1: secret(), r2: secret() };
    const p1 = await createProxy(w, { api_key: values.p1 });
    const p2 = await createProxy(w, { api_key: values.p2 });
    const r1 = await createReactor(w, { KEY: values.r1, n: 1 });
    const r2 = await createReactor(w, { KEY: values.r2 });
    await makeLegacy(w.tenantId, "PROXY", p1.id, { api_key: values.p1 });
    await makeLegacy(w.tenantId, "PROXY", p2.id, { api_key: values.p2 });
    await makeLegacy(w.tenantId, "REACTOR", r1.id, { KEY: values.r1, n: 1 });
    await makeLegacy(w.tenantId, "REACTOR", r2.id, { KEY: values.r2 });

    // Read as they are.
    const legacyProxy = await w.api.get<{ configuration: unknown }>(`/proxies/${p1.id}`, { key: w.member });
    expect(legacyProxy.body.configuration).toEqual({ api_key: values.p1 });
    expect((await seenByTransforms(w, p1.key)).sent).toEqual({ configuration: { api_key: values.p1 } });
    const legacyReactor = await w.api.get<{ configuration: unknown }>(`/reactors/${r1.id}`, {
      key: w.member,
    });
    expect(legacyReactor.body.configuration).toEqual({ KEY: values.r1, n: 1 });
    expect(await seenByReactor(w, r1.id)).toEqual({ KEY: values.r1, n: 1 });

    // The next write seals them (a rename, a proxy key rotation).
    const renamed = await w.api.patch(`/reactors/${r2.id}`, {
      key: w.member,
      headers: mergePatch,
      body: { name: "renamed" },
    });
    expect(renamed.status, JSON.stringify(renamed.body)).toBe(204);
    await expectSealed(w.tenantId, "REACTOR", r2.id, [values.r2]);
    const rotatedKey = await w.api.post<{ key: string; configuration: unknown }>(
      `/proxies/${p2.id}/key/rotate`,
      { key: w.member },
    );
    expect(rotatedKey.status, JSON.stringify(rotatedKey.body)).toBe(200);
    expect(rotatedKey.body.configuration).toEqual({ api_key: values.p2 });
    await expectSealed(w.tenantId, "PROXY", p2.id, [values.p2]);
    expect((await seenByTransforms(w, rotatedKey.body.key)).sent).toEqual({
      configuration: { api_key: values.p2 },
    });
    const old = (await w.api.get<{ current: number }>("/tenants/self/keys", { key: w.member })).body.current;

    // A rotation and a rewrap: everything sealed under the new version, nothing plain left.
    const current = await rotate(w.api, w.member);
    expect((await rewrapToEnd(w.api, w.member)).status).toBe("succeeded");
    await expectSealed(w.tenantId, "PROXY", p1.id, [values.p1], `k${current}`);
    await expectSealed(w.tenantId, "PROXY", p2.id, [values.p2], `k${current}`);
    await expectSealed(w.tenantId, "REACTOR", r1.id, [values.r1], `k${current}`);
    await expectSealed(w.tenantId, "REACTOR", r2.id, [values.r2], `k${current}`);
    await expectNowhereInTable(Object.values(values));
    const logged = await w.api.get<{ data: { message: string }[] }>("/logs?size=100", { key: w.member });
    const messages = logged.body.data.map((entry) => entry.message).join("\n");
    expect(messages).toContain(`Proxy key and configuration re-sealed under key version ${current}`);
    expect(messages).toContain(`Reactor configuration re-sealed under key version ${current}`);

    // The old version destroyed, every configuration still opens.
    await w.api.post("/_test/clock", {
      key: svc.rootKey,
      body: { advance_seconds: SHORT_LIVED_SEALED_SECONDS + 60 },
    });
    expect((await w.api.delete(`/tenants/self/keys/${old}`, { key: w.member })).status).toBe(204);
    for (const [path, expected] of [
      [`/proxies/${p1.id}`, { api_key: values.p1 }],
      [`/proxies/${p2.id}`, { api_key: values.p2 }],
      [`/reactors/${r1.id}`, { KEY: values.r1, n: 1 }],
      [`/reactors/${r2.id}`, { KEY: values.r2 }],
    ] as const) {
      const read = await w.api.get<{ configuration: unknown }>(path, { key: w.member });
      expect(read.status, path).toBe(200);
      expect(read.body.configuration, path).toEqual(expected);
    }
    expect((await seenByTransforms(w, p1.key)).answered).toEqual({ configuration: { api_key: values.p1 } });
    expect(await seenByReactor(w, r1.id)).toEqual({ KEY: values.r1, n: 1 });
  });

  it("a key version a reactor's configuration is sealed under is not destroyed until a rewrap re-seals it", async () => {
    // No token, proxy or webhook secret: only the reactor's configuration needs the old version.
    const w = await world();
    const value = secret();
    const reactor = await createReactor(w, { KEY: value });
    const old = (await w.api.get<{ current: number }>("/tenants/self/keys", { key: w.member })).body.current;
    await rotate(w.api, w.member);
    await w.api.post("/_test/clock", {
      key: svc.rootKey,
      body: { advance_seconds: SHORT_LIVED_SEALED_SECONDS + 60 },
    });

    const refused = await w.api.delete<{ detail: string }>(`/tenants/self/keys/${old}`, { key: w.member });
    expect(refused.status).toBe(409);
    expect(refused.body.detail).toContain("rewrap");
    expect((await rewrapToEnd(w.api, w.member)).status).toBe("succeeded");
    expect((await w.api.delete(`/tenants/self/keys/${old}`, { key: w.member })).status).toBe(204);
    const read = await w.api.get<{ configuration: unknown }>(`/reactors/${reactor.id}`, { key: w.member });
    expect(read.status).toBe(200);
    expect(read.body.configuration).toEqual({ KEY: value });
  });

  it("a re-seal of a configuration never writes what it read over a save made meanwhile", async () => {
    const w = await world();
    const { dynamo, config } = svc.service.deps;
    const audit = new AuditItems(config.tableName, config.logRetentionDays);
    const proxies = new DynamoProxyStore(dynamo, config.tableName, audit);
    const reactors = new DynamoReactorStore(dynamo, config.tableName, audit);
    const proxy = await createProxy(w, { api_key: secret() });
    const reactor = await createReactor(w, { KEY: secret() });
    await makeLegacy(w.tenantId, "REACTOR", reactor.id, { KEY: "read" });
    await makeLegacy(w.tenantId, "PROXY", proxy.id, { api_key: "read" });
    const readProxy = (await proxies.get(w.tenantId, proxy.id)) as StoredProxy;
    const readReactor = (await reactors.get<StoredReactor>(
      "reactor",
      w.tenantId,
      reactor.id,
    )) as StoredReactor;

    // Saves meanwhile: a plain map is replaced, then removed.
    const saved = await w.api.patch(`/reactors/${reactor.id}`, {
      key: w.member,
      headers: mergePatch,
      body: { configuration: { KEY: "saved" } },
    });
    expect(saved.status, JSON.stringify(saved.body)).toBe(204);
    const removed = await w.api.patch(`/proxies/${proxy.id}`, {
      key: w.member,
      headers: mergePatch,
      body: { configuration: null },
    });
    expect(removed.status, JSON.stringify(removed.body)).toBe(204);

    const stale = "v1.k1.AAAA.AAAA.AAAA";
    expect(
      await reactors.resealConfiguration(readReactor, stale, systemAudit(w.tenantId, "reactor", reactor.id)),
    ).toBe(false);
    expect(
      await proxies.reseal(
        readProxy,
        { sealed_key: readProxy.sealed_key, sealed_configuration: stale },
        systemAudit(w.tenantId, "proxy", proxy.id),
      ),
    ).toBe(false);
    const reactorNow = await w.api.get<{ configuration: unknown }>(`/reactors/${reactor.id}`, {
      key: w.member,
    });
    expect(reactorNow.body.configuration).toEqual({ KEY: "saved" });
    const proxyNow = await w.api.get<{ configuration?: unknown }>(`/proxies/${proxy.id}`, { key: w.member });
    expect(proxyNow.status).toBe(200);
    expect(proxyNow.body).not.toHaveProperty("configuration");

    // As read (nothing saved since): the re-seal is written and the plain map is gone.
    const current = (await reactors.get<StoredReactor>("reactor", w.tenantId, reactor.id)) as StoredReactor;
    await makeLegacy(w.tenantId, "REACTOR", reactor.id, { KEY: "plain" });
    const legacy = (await reactors.get<StoredReactor>("reactor", w.tenantId, reactor.id)) as StoredReactor;
    expect(
      await reactors.resealConfiguration(
        legacy,
        String(current.sealed_configuration),
        systemAudit(w.tenantId, "reactor", reactor.id),
      ),
    ).toBe(true);
    const after = await rawItem(w.tenantId, "REACTOR", reactor.id);
    expect(after).not.toHaveProperty("configuration");
    expect(after.sealed_configuration).toBe(current.sealed_configuration);
  });

  it("a merged configuration past the bound is a 400 (its sealed form would not fit the item: a 500); a rewrap leaves an older plain one that large as it is", async () => {
    const w = await world();
    const code = `${ECHO}\n//${"x".repeat(250 * 1024)}`; // own code near its limit, in the same item
    const res = await w.api.post<{ id: string }>("/reactors", {
      key: w.member,
      body: { name: "big", code, configuration: {}, application: { id: w.app.id } },
    });
    expect(res.status).toBe(201);
    const patch = (configuration: Record<string, unknown>) =>
      w.api.patch(`/reactors/${res.body.id}`, {
        key: w.member,
        body: { configuration },
        headers: mergePatch,
      });
    expect((await patch({ a: "a".repeat(60_000) })).status).toBe(204);
    const merged = await patch({ b: "b".repeat(60_000) });
    expect(merged.status).toBe(400);
    expect(JSON.stringify(merged.body)).toContain("configuration");

    // An item from before configurations were sealed, merged past the bound then: the rewrap goes on past it.
    const large = { a: "a".repeat(60_000), b: "b".repeat(60_000) };
    await makeLegacy(w.tenantId, "REACTOR", res.body.id, large);
    await rotate(w.api, w.member);
    expect((await rewrapToEnd(w.api, w.member)).status).toBe("succeeded");
    expect((await rawItem(w.tenantId, "REACTOR", res.body.id)).configuration).toEqual(large);
  });

  it("a reactor whose code (two-byte characters) and configuration fit as a map but not sealed is a 400, and a rewrap leaves an older one plain", async () => {
    const w = await world();
    // Within 256 Ki characters of code, 65,000 of them two bytes in UTF-8; a configuration under 64 KiB.
    const code = `${ECHO}\n//${"é".repeat(65_000)}${"x".repeat(256 * 1024 - ECHO.length - 3 - 65_000)}`;
    const configuration = { blob: "c".repeat(63_000) };
    const body = { name: "big", code, application: { id: w.app.id } };
    const refused = await w.api.post("/reactors", { key: w.member, body: { ...body, configuration } });
    expect(refused.status).toBe(400); // it was a 500: the sealed item passed DynamoDB's 400 KB

    const created = await w.api.post<{ id: string }>("/reactors", {
      key: w.member,
      body: { ...body, configuration: {} },
    });
    expect(created.status).toBe(201);
    await makeLegacy(w.tenantId, "REACTOR", created.body.id, configuration); // fit as a map
    await rotate(w.api, w.member);
    expect((await rewrapToEnd(w.api, w.member)).status).toBe("succeeded"); // it stopped there for good
    expect((await rawItem(w.tenantId, "REACTOR", created.body.id)).configuration).toEqual(configuration);
  });
});
