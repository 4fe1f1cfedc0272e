import { randomUUID } from "node:crypto";
import { BasisTheory, BasisTheoryClient } from "@basis-theory/node-sdk";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { routeList } from "#shared/api/index.ts";
import { client, createTenant } from "#test/support/http.ts";
import { renamingFetch } from "#test/support/sdk.ts";
import { useService } from "#test/support/service.ts";
import { appKey, revealEverything } from "#test/support/tokens.ts";

/**
 * The hosted vault's official Node SDK (its canary suite's flows, v5.7.0) driven against this service with
 * only the header prefix renamed (`BT-` → `SVC-`, test/support/sdk.ts): no path mapping. The many-tokens flows
 * (POST /tokenize, POST /detokenize, GET /v2/tokens) run where those routes exist. test/integration/node-sdk.test.ts
 * drives the same SDK through its `fetcher` option instead, for the many-tokens routes in depth.
 */
const svc = useService();
const hasRoute = (method: string, path: string) =>
  routeList.some((r) => r.method === method && r.path === path);

let managementKey: string;
let privateKey: string;
const clients = () => ({
  management: new BasisTheoryClient({ apiKey: managementKey, environment: svc.url, maxRetries: 0 }),
  private: new BasisTheoryClient({ apiKey: privateKey, environment: svc.url, maxRetries: 0 }),
});

beforeAll(async () => {
  const api = client(svc.url);
  const tenant = await createTenant(api, svc.rootKey, "SDK Integration Tests");
  managementKey = tenant.managementKey;
  privateKey = await appKey(api, managementKey, { type: "private", rules: revealEverything });
  vi.stubGlobal("fetch", renamingFetch(svc.url, globalThis.fetch));
});
afterAll(() => {
  vi.unstubAllGlobals();
});

const REACTOR_CODE = `
  module.exports = async function (req) {
    // Do something with req.configuration.SERVICE_API_KEY
    return { raw: { foo: "bar" } };
  };
`;
const TRANSFORM_CODE = `
  module.exports = async function (req) {
    return { headers: req.args.headers, body: req.args.body };
  };
`;

async function createApplication(management: BasisTheoryClient) {
  const application = await management.applications.create({
    type: "private",
    name: `(Deletable) node-SDK-${randomUUID()}`,
    permissions: ["token:use"],
  });
  return application.id as string;
}

async function createCardToken(sdk: BasisTheoryClient, cardNumber: string, idempotencyKey?: string) {
  const token = await sdk.tokens.create(
    {
      type: "card",
      data: { number: cardNumber, expiration_month: 4, expiration_year: 2025, cvc: 123 },
      metadata: { customer_id: "3181" },
      searchIndexes: ["{{ data.expiration_month }}", "{{ data.number | last4 }}"],
      fingerprintExpression: "{{ data.number }}",
      mask: { number: "{{ data.number, reveal_last: 4 }}", cvc: "{{ data.cvc }}" },
      deduplicateToken: false,
      containers: ["/pci/high/"],
    },
    idempotencyKey ? { idempotencyKey } : undefined,
  );
  return token.id as string;
}

describe("the hosted vault's SDK, headers renamed", () => {
  it("authenticates and reads the tenant", async () => {
    const tenant = await clients().management.tenants.self.get();

    expect(tenant.name).toBe("SDK Integration Tests");
  });

  it("refuses an invalid key with the SDK's UnauthorizedError", async () => {
    const sdk = new BasisTheoryClient({ apiKey: "INVALID", environment: svc.url, maxRetries: 0 });

    await expect(sdk.tenants.self.get()).rejects.toBeInstanceOf(BasisTheory.UnauthorizedError);
  });

  it("sends a correlation id (BT-TRACE-ID) without harm", async () => {
    const tenant = await clients().management.tenants.self.get({ correlationId: randomUUID() });

    expect(tenant.id).toBeDefined();
  });

  it("supports the proxy lifecycle", async () => {
    const { management } = clients();
    const applicationId = await createApplication(management);
    const body = {
      destinationUrl: "https://example.com/api",
      requestTransform: { code: TRANSFORM_CODE },
      responseTransform: { code: TRANSFORM_CODE },
      configuration: { SERVICE_API_KEY: "key_abcd1234" },
      application: { id: applicationId },
      requireAuth: true,
    };

    const proxy = await management.proxies.create({ name: `(Deletable) node-SDK-${randomUUID()}`, ...body });
    const updated = await management.proxies.update(proxy.id as string, {
      name: `(Deletable) node-SDK-${randomUUID()}`,
      ...body,
    });
    await management.proxies.update(proxy.id as string, {
      name: `(Deletable) node-SDK-${randomUUID()}`,
      destinationUrl: "https://example.com/api",
      configuration: { SERVICE_API_KEY: "key_abcd1234" },
    });
    await management.proxies.delete(proxy.id as string);
    await management.applications.delete(applicationId);

    expect(updated.id).toBe(proxy.id);
    await expect(management.proxies.get(proxy.id as string)).rejects.toBeInstanceOf(
      BasisTheory.NotFoundError,
    );
  });

  it("supports the reactor lifecycle: create with code, update, patch, react, reactAsync, results", async () => {
    const { management, private: sdk } = clients();
    const applicationId = await createApplication(management);
    const reactor = await management.reactors.create({
      name: `(Deletable) node-SDK-${randomUUID()}`,
      code: REACTOR_CODE,
      configuration: { SERVICE_API_KEY: "key_abcd1234" },
      application: { id: applicationId },
    });
    const reactorId = reactor.id as string;

    const updated = await management.reactors.update(reactorId, {
      name: `(Deletable) node-SDK-${randomUUID()}`,
      code: REACTOR_CODE,
      configuration: { SERVICE_API_KEY: "key_abcd1234" },
      application: { id: applicationId },
    });
    await management.reactors.patch(reactorId, {
      name: `(Deletable) node-SDK-${randomUUID()}`,
      configuration: { SERVICE_API_KEY: "key_abcd1234" },
    });
    const reacted = await sdk.reactors.react(reactorId, { args: { foo: "bar" } });
    const queued = await sdk.reactors.reactAsync(reactorId, { args: { foo: "bar" } });
    const requestId = queued.asyncReactorRequestId as string;
    let result: unknown;
    for (let attempt = 0; result === undefined && attempt < 200; attempt += 1) {
      try {
        result = await sdk.reactors.results.get(reactorId, requestId);
      } catch (error) {
        if (!(error instanceof BasisTheory.NotFoundError)) throw error;
        await new Promise((r) => setTimeout(r, 50));
      }
    }
    await management.reactors.delete(reactorId);
    await management.applications.delete(applicationId);

    expect(reactor.code).toBe(REACTOR_CODE);
    expect(updated.id).toBe(reactorId);
    expect(reacted.raw).toEqual({ foo: "bar" });
    expect(requestId).toMatch(/^[0-9a-f-]{36}$/);
    expect(result).toEqual({ raw: { foo: "bar" } });
  });

  it("creates and updates a token", async () => {
    const sdk = clients().private;
    const token = await sdk.tokens.create({
      type: "token",
      data: "Sensitive Value",
      mask: "{{ data | reveal_last: 4 }}",
      containers: ["/general/high/"],
      metadata: { nonSensitiveField: "Non-Sensitive Value" },
      searchIndexes: ["{{ data }}", "{{ data | last4 }}"],
      fingerprintExpression: "{{ data }}",
      deduplicateToken: true,
      expiresAt: "8/26/2030 7:23:57 PM -07:00",
    });

    const updated = await sdk.tokens.update(token.id as string, {
      data: "Sensitive Value",
      mask: "{{ data | reveal_last: 4 }}",
      metadata: { nonSensitiveField: "Non-Sensitive Value" },
      searchIndexes: ["{{ data }}", "{{ data | last4 }}"],
      fingerprintExpression: "{{ data }}",
      deduplicateToken: true,
    });

    expect(token.id).toBeDefined();
    expect(updated.id).toBe(token.id);
  });

  it("supports the token lifecycle (a card with a numeric cvc, a proxy and a reactor on the way)", async () => {
    const { management, private: sdk } = clients();
    const tokenId = await createCardToken(sdk, "6011000990139424");
    const first = await sdk.tokens.get(tokenId);
    await sdk.tokens.update(tokenId, { data: { number: "4242424242424242" } });
    const second = await sdk.tokens.get(tokenId);
    const applicationId = await createApplication(management);
    const proxy = await management.proxies.create({
      name: `(Deletable) node-SDK-${randomUUID()}`,
      destinationUrl: `https://echo.example.com/${randomUUID()}`,
      application: { id: applicationId },
    });
    await management.proxies.delete(proxy.id as string);
    const reactor = await management.reactors.create({
      name: `(Deletable) node-SDK-${randomUUID()}`,
      code: "module.exports = function (req) {return {raw: req.args}}",
      application: { id: applicationId },
    });
    const args = { key1: `Key1-${randomUUID()}`, key2: `Key2-${randomUUID()}` };
    const reacted = await sdk.reactors.react(reactor.id as string, { args });
    await management.reactors.delete(reactor.id as string);
    await management.applications.delete(applicationId);
    await sdk.tokens.delete(tokenId);

    expect(first.data).toMatchObject({ number: "6011000990139424", cvc: 123 });
    expect(second.data).toMatchObject({ number: "4242424242424242", cvc: 123 });
    expect(reacted.raw).toEqual(args);
    await expect(sdk.tokens.get(tokenId)).rejects.toBeInstanceOf(BasisTheory.NotFoundError);
  });

  it("replays a create sent again with the same idempotency key (BT-IDEMPOTENCY-KEY), whatever its body", async () => {
    const sdk = clients().private;
    const idempotencyKey = randomUUID();

    const first = await createCardToken(sdk, "6011000990139424", idempotencyKey);
    const second = await createCardToken(sdk, "4242424242424242", idempotencyKey);

    expect(second).toBe(first);
  });

  const CARD_REQUEST = {
    type: "card",
    data: { number: "4242424242424242", expiration_month: 12, expiration_year: 2025, cvc: "123" },
  };
  const GUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[1-8][0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/i;

  it.runIf(hasRoute("POST", "/tokenize"))("tokenizes (plain, card)", async () => {
    const sdk = clients().private;

    const plain = (await sdk.tokens.tokenize({
      type: "token",
      data: "Sensitive Value",
      metadata: { nonSensitive: "Non-Sensitive Value" },
      search_indexes: ["{{ data }}"],
      fingerprint_expression: "{{ data }}",
    })) as { id: string };
    const carded = (await sdk.tokens.tokenize({
      ...CARD_REQUEST,
      metadata: { nonSensitiveField: "Non-Sensitive Value" },
    })) as { id: string };

    expect(plain.id).toBeDefined();
    expect(carded.id).toBeDefined();
  });

  // The canary sends bare values ("John") beside token requests and expects each tokenized and answered as its id.
  it.runIf(hasRoute("POST", "/tokenize"))("tokenizes bare values (basic, array, composite)", async () => {
    const sdk = clients().private;

    const basic = (await sdk.tokens.tokenize({ first_name: "John", last_name: "Doe" })) as Record<
      string,
      string
    >;
    const array = (await sdk.tokens.tokenize([
      "John",
      "Doe",
      CARD_REQUEST,
      { type: "token", data: "Sensitive Value" },
    ])) as [string, string, { id: string }, { id: string }];
    const composite = (await sdk.tokens.tokenize({
      first_name: "John",
      last_name: "Doe",
      primary_card: CARD_REQUEST,
      sensitive_tags: ["preferred", { type: "token", data: "vip" }],
    })) as { first_name: string; primary_card: { id: string }; sensitive_tags: [string, { id: string }] };

    expect(basic.first_name).toMatch(GUID);
    expect(basic.last_name).toMatch(GUID);
    expect([array[0], array[1], array[2].id, array[3].id]).toEqual(
      Array(4).fill(expect.stringMatching(GUID)),
    );
    expect(composite.first_name).toMatch(GUID);
    expect(composite.primary_card.id).toMatch(GUID);
    expect(composite.sensitive_tags[0]).toMatch(GUID);
    expect(composite.sensitive_tags[1].id).toMatch(GUID);
  });

  it.runIf(hasRoute("POST", "/detokenize"))("detokenizes (one expression, an array)", async () => {
    const sdk = clients().private;
    const first = await createCardToken(sdk, "4242424242424242");
    const second = await createCardToken(sdk, "4111111111111111");

    const one = (await sdk.tokens.detokenize({ card_number: `{{ ${first} | json: '$.number' }}` })) as {
      card_number: string;
    };
    const many = (await sdk.tokens.detokenize({ tokens: [`{{ ${first} }}`, `{{ ${second} }}`] })) as {
      tokens: { number: string }[];
    };

    expect(one.card_number).toBe("4242424242424242");
    expect(many.tokens.map((t) => t.number)).toEqual(["4242424242424242", "4111111111111111"]);
  });

  it.runIf(hasRoute("GET", "/v2/tokens"))("pages through tokens with listV2", async () => {
    const sdk = clients().private;
    for (let i = 0; i < 4; i += 1) await createCardToken(sdk, "4242424242424242");

    let count = 0;
    for await (const _token of await sdk.tokens.listV2({ size: 3 })) {
      count += 1;
      if (count > 3) break;
    }

    expect(count).toBeGreaterThan(3);
  });
});
