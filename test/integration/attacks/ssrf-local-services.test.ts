/**
 * Attack: a tenant points a proxy's destination_url (or a reaction's callback_url) at the service's own
 * internals and lets the service make the request for it: DynamoDB Local (no credentials: every tenant's
 * sealed data and key material), the API's own port (requests that come from the service itself), or a
 * cloud metadata address (the function's or the host's credentials), directly or through a DNS name that
 * resolves there. Redirects would be a way round; none is followed.
 *
 * With SVC_PROXY_ALLOW_PRIVATE on (local development with loopback receivers), those stay refused; with it
 * off (the default, locally too), loopback is refused as well.
 */
import dns from "node:dns";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, beforeEach, describe, expect, inject, it, vi } from "vitest";
import { type Client, client, createTenant } from "#test/support/http.ts";
import { useService } from "#test/support/service.ts";

/** Names an attacker controls, and where their DNS points them. Every other name resolves as usual. */
const ATTACKER_DNS: Record<string, dns.LookupAddress[]> = {
  "dynamo.attacker.test": [{ address: "127.0.0.1", family: 4 }],
  "metadata.attacker.test": [{ address: "169.254.169.254", family: 4 }],
  // One harmless public address next to the metadata one: a single refused address refuses the name.
  "mixed.attacker.test": [
    { address: "93.184.215.14", family: 4 },
    { address: "169.254.169.254", family: 4 },
  ],
};

beforeEach(() => {
  const real = dns.lookup;
  vi.spyOn(dns, "lookup").mockImplementation(((
    hostname: string,
    options: dns.LookupOptions,
    callback: (error: NodeJS.ErrnoException | null, address: unknown, family?: number) => void,
  ) => {
    const fake = ATTACKER_DNS[hostname];
    if (!fake) return (real as unknown as (...args: unknown[]) => void)(hostname, options, callback);
    if (options.all) return callback(null, fake);
    return callback(null, fake[0]?.address, fake[0]?.family);
  }) as unknown as typeof dns.lookup);
  return () => vi.restoreAllMocks();
});

interface ProxyAnswer {
  proxy_error?: { status: number; type?: string; detail?: string };
}

/** A tenant with one proxy per destination; `call(url)` creates (once) and invokes the proxy for url. */
async function tenantProxies(api: Client, rootKey: string) {
  const { managementKey } = await createTenant(api, rootKey);
  const caller = await api.post<{ key: string }>("/applications", {
    key: managementKey,
    body: { name: "caller", type: "private", permissions: ["token:use"] },
  });
  return {
    create: (destination: string) =>
      api.post<{ key: string }>("/proxies", {
        key: managementKey,
        body: { name: "internal", destination_url: destination },
      }),
    call: async (destination: string, path = "") => {
      const created = await api.post<{ key: string }>("/proxies", {
        key: managementKey,
        body: { name: "internal", destination_url: destination },
      });
      expect(created.status, JSON.stringify(created.body)).toBe(201);
      return api.post<ProxyAnswer>(`/proxy${path}`, {
        key: caller.body.key,
        headers: { "svc-proxy-key": created.body.key, "x-amz-target": "DynamoDB_20120810.ListTables" },
        body: {},
      });
    },
    managementKey,
    callerKey: caller.body.key,
  };
}

/** Refused by the service (a proxy_error problem), never the destination's own answer. */
function expectRefused(res: { status: number; body: ProxyAnswer }) {
  expect(res.body.proxy_error, JSON.stringify(res.body)).toBeDefined();
  expect([400, 403]).toContain(res.status);
  expect(JSON.stringify(res.body)).not.toMatch(/TableNames|169\.254|127\.0\.0\.1|dynamo/i);
}

describe("with SVC_PROXY_ALLOW_PRIVATE on", () => {
  const svc = useService({ allowPrivateDestinations: true });
  const dynamoEndpoint = inject("dynamodbEndpoint");
  const dynamoPort = new URL(dynamoEndpoint).port;
  let redirector: Server;
  let redirectorUrl: string;

  beforeAll(async () => {
    // A destination tenants may legitimately use locally, answering with a redirect to DynamoDB Local.
    redirector = createServer((_req, res) => {
      res.writeHead(307, { location: dynamoEndpoint });
      res.end();
    });
    await new Promise<void>((resolve) => redirector.listen(0, "127.0.0.1", resolve));
    redirectorUrl = `http://127.0.0.1:${(redirector.address() as AddressInfo).port}`;
  });
  afterAll(() => {
    redirector.close();
  });

  it.each([
    ["its endpoint", () => dynamoEndpoint],
    ["localhost on its port", () => `http://localhost:${dynamoPort}/`],
    ["[::ffff:127.0.0.1] on its port", () => `http://[::ffff:127.0.0.1]:${dynamoPort}/`],
    ["a name that resolves to 127.0.0.1, on its port", () => `http://dynamo.attacker.test:${dynamoPort}/`],
  ])("refuses DynamoDB Local: %s", async (_, destination) => {
    const { call } = await tenantProxies(client(svc.url), svc.rootKey);

    const res = await call(destination());

    expectRefused(res);
    expect(res.status).toBe(403);
  });

  it("refuses the API's own port, also through another name for this machine", async () => {
    const api = client(svc.url);
    const { call } = await tenantProxies(api, svc.rootKey);
    const port = new URL(svc.url).port;

    for (const destination of [
      `http://127.0.0.1:${port}/tenants`,
      `http://localhost:${port}/tenants`,
      `http://dynamo.attacker.test:${port}/tenants`,
      `http://0.0.0.0:${port}/tenants`,
    ])
      expectRefused(await call(destination));
  });

  it.each([
    ["169.254.169.254", "http://169.254.169.254/latest/meta-data/iam/security-credentials/"],
    ["ECS credentials 169.254.170.2", "http://169.254.170.2/v2/credentials"],
    ["IPv4-mapped [::ffff:169.254.169.254]", "http://[::ffff:169.254.169.254]/latest/"],
    ["NAT64 [64:ff9b::a9fe:a9fe]", "http://[64:ff9b::a9fe:a9fe]/latest/"],
    ["AWS IPv6 metadata [fd00:ec2::254]", "http://[fd00:ec2::254]/latest/"],
    ["IPv6 link-local [fe80::1]", "http://[fe80::1]/"],
    ["Alibaba 100.100.100.200", "http://100.100.100.200/latest/meta-data/"],
    ["a name that resolves to 169.254.169.254", "http://metadata.attacker.test/latest/"],
    ["a name with a public and a metadata address", "http://mixed.attacker.test/latest/"],
  ])("refuses the metadata service: %s, at once and with 403", async (_, destination) => {
    const { call } = await tenantProxies(client(svc.url), svc.rootKey);
    const res = await call(destination);

    expectRefused(res);
    expect(res.status).toBe(403); // refused before connecting: a timeout would answer 504
  });

  it("hands a redirect back to the caller instead of following it to DynamoDB Local", async () => {
    const { create, callerKey } = await tenantProxies(client(svc.url), svc.rootKey);
    const proxy = await create(redirectorUrl);

    // fetch itself must not follow it either: the answer is read as the service sent it.
    const res = await fetch(`${svc.url}/proxy`, {
      method: "POST",
      redirect: "manual",
      headers: {
        "svc-api-key": callerKey,
        "svc-proxy-key": proxy.body.key,
        "x-amz-target": "DynamoDB_20120810.ListTables",
        "content-type": "application/json",
      },
      body: "{}",
    });

    expect(res.status).toBe(307);
    expect(res.headers.get("location")).toBe(dynamoEndpoint);
    expect(await res.text()).not.toContain("TableNames");
  });

  it("refuses a reaction's callback to DynamoDB Local (a webhook delivery goes through the same rule)", async () => {
    const api = client(svc.url);
    const { managementKey, appKey, reactorId } = await noopReactor(api, svc.rootKey);

    const accepted = await api.post<{ request_id: string }>(`/reactors/${reactorId}/react`, {
      key: appKey,
      body: { args: {}, callback_url: `http://dynamo.attacker.test:${dynamoPort}/` },
    });
    expect(accepted.status, JSON.stringify(accepted.body)).toBe(202);
    let attempts: string[] = [];
    const deadline = Date.now() + 15_000;
    while (attempts.length === 0 && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 100));
      const logs = await api.get<{ data: { message: string }[] }>(`/logs?entity_id=${reactorId}&size=50`, {
        key: managementKey,
      });
      attempts = logs.body.data
        .map((entry) => entry.message)
        .filter((message) => message.includes(accepted.body.request_id) && /attempt/i.test(message));
    }

    expect(attempts).toHaveLength(1);
    expect(attempts[0]).toMatch(/refused/);
    expect(attempts[0]).not.toMatch(/127\.0\.0\.1|dynamo/i);
  });

  it("refuses a metadata callback_url with 400 before anything runs or is queued", async () => {
    const api = client(svc.url);
    const { appKey, reactorId } = await noopReactor(api, svc.rootKey);

    const res = await api.post(`/reactors/${reactorId}/react`, {
      key: appKey,
      body: { args: {}, callback_url: "http://169.254.169.254/latest/meta-data/" },
    });

    expect(res.status).toBe(400);
    expect(res.headers.get("content-type")).toMatch(/problem\+json/);
    expect(res.body).toMatchObject({ errors: { callback_url: [expect.stringMatching(/does not call/)] } });
  });
});

describe("with SVC_PROXY_ALLOW_PRIVATE unset (the default, locally too)", () => {
  const svc = useService();
  let receiver: Server;
  let port: number;
  let hits = 0;

  beforeAll(async () => {
    receiver = createServer((_req, res) => {
      hits += 1;
      res.end("reached");
    });
    await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve));
    port = (receiver.address() as AddressInfo).port;
  });
  afterAll(() => {
    receiver.close();
  });

  it("refuses plain-http destinations when the proxy is created", async () => {
    const { create } = await tenantProxies(client(svc.url), svc.rootKey);

    const res = await create(`http://127.0.0.1:${port}/`);

    expect(res.status).toBe(400);
  });

  it.each([
    ["127.0.0.1", () => `https://127.0.0.1:${port}/`],
    ["localhost", () => `https://localhost:${port}/`],
    ["a name that resolves to 127.0.0.1", () => `https://dynamo.attacker.test:${port}/`],
    ["DynamoDB Local", () => `https://127.0.0.1:${new URL(inject("dynamodbEndpoint")).port}/`],
  ])("refuses a loopback destination: %s", async (_, destination) => {
    const { call } = await tenantProxies(client(svc.url), svc.rootKey);

    const res = await call(destination());

    expectRefused(res);
    expect(res.status).toBe(403);
    expect(hits).toBe(0);
  });
});

/** A tenant with a reactor whose formula does nothing, and a key that may react with it. */
async function noopReactor(api: ReturnType<typeof client>, rootKey: string) {
  const { managementKey } = await createTenant(api, rootKey);
  const app = await api.post<{ id: string; key: string }>("/applications", {
    key: managementKey,
    body: { name: "r", type: "private", permissions: ["token:use"] },
  });
  const formula = await api.post<{ id: string }>("/reactor-formulas", {
    key: managementKey,
    body: { name: "Noop", code: "module.exports = async () => ({ raw: { ok: true } });" },
  });
  const reactor = await api.post<{ id: string }>("/reactors", {
    key: managementKey,
    body: {
      name: "noop",
      formula: { id: formula.body.id },
      configuration: {},
      application: { id: app.body.id },
    },
  });
  return { managementKey, appKey: app.body.key, reactorId: reactor.body.id };
}
