import { readFileSync } from "node:fs";
import { describe, expect, it, vi } from "vitest";
import { config } from "#shared/config.ts";
import { logger } from "#shared/logger.ts";
import { bodyText, client, createTenant } from "#test/support/http.ts";
import { useService } from "#test/support/service.ts";
import { appKey } from "#test/support/tokens.ts";
import { type ApiDocument, renderApiReference } from "../../scripts/api-reference.ts";

const svc = useService();

const problemShape = {
  type: expect.stringMatching(/^https:\/\//),
  title: expect.any(String),
  status: expect.any(Number),
  detail: expect.any(String),
};

describe("errors are RFC 9457 problem+json", () => {
  it("answers 404 for an unknown route and 405 for a known path with the wrong method", async () => {
    const api = client(svc.url);

    const unknown = await api.get("/no/such/route");
    const wrongMethod = await api.call("PATCH", "/applications");

    expect(unknown.status).toBe(404);
    expect(unknown.headers.get("content-type")).toBe("application/problem+json");
    expect(unknown.body).toMatchObject({ ...problemShape, status: 404 });
    expect(wrongMethod.status).toBe(405);
    expect(wrongMethod.headers.get("allow")).toContain("GET");
  });

  it("answers 401 with a problem for a missing or unknown key", async () => {
    const api = client(svc.url);

    const missing = await api.get("/applications");
    const unknown = await api.get("/applications", { key: "key_mgt_doesnotexist" });

    for (const res of [missing, unknown]) {
      expect(res.status).toBe(401);
      expect(res.body).toMatchObject({ ...problemShape, status: 401 });
    }
  });

  it("authenticates before it validates: without a valid key a bad request is a 401 that tells nothing of the route's schema", async () => {
    const api = client(svc.url);
    const { managementKey } = await createTenant(api, svc.rootKey);
    const bad = { name: 42, type: "galactic" };
    const readOnly = await appKey(api, managementKey, { type: "private", permissions: ["token:read"] });

    const missing = await api.post("/applications", { body: bad });
    const unknown = await api.post("/applications", { key: "key_mgt_doesnotexist", rawBody: "{not json" });
    const badQuery = await api.get("/applications?size=lots", { key: "key_mgt_doesnotexist" });
    const lacking = await api.post("/applications", { key: readOnly, body: bad });

    for (const res of [missing, unknown, badQuery]) {
      expect(res.status).toBe(401);
      expect(JSON.stringify(res.body)).not.toMatch(/galactic|errors|JSON/);
    }
    expect(lacking.status).toBe(403);
    // With a key that may call the route, the same request is the 400 that names each field.
    expect((await api.post("/applications", { key: managementKey, body: bad })).status).toBe(400);
  });

  it("answers 400 for malformed JSON, a missing body and wrong types, with errors per field", async () => {
    const api = client(svc.url);
    const { managementKey } = await createTenant(api, svc.rootKey);

    const malformed = await api.post("/applications", { key: managementKey, rawBody: "{not json" });
    const empty = await api.post("/applications", { key: managementKey });
    const wrongTypes = await api.post("/applications", {
      key: managementKey,
      body: { name: 42, type: "galactic", permissions: "log:read" },
    });
    const notAnObject = await api.post("/applications", { key: managementKey, body: [1, 2] });

    expect(malformed.status).toBe(400);
    expect(malformed.body.detail).toContain("not valid JSON");
    expect(empty.status).toBe(400);
    expect(wrongTypes.status).toBe(400);
    expect(Object.keys(wrongTypes.body.errors as object).sort()).toEqual(["name", "permissions", "type"]);
    expect(notAnObject.status).toBe(400);
  });

  it("answers 413 for a body above the limit, before doing any work", async () => {
    const api = client(svc.url);
    const { managementKey } = await createTenant(api, svc.rootKey);
    const huge = JSON.stringify({ name: "x".repeat(1024 * 1024 + 10), type: "public" });

    const res = await api.post("/applications", { key: managementKey, rawBody: huge });
    const list = await api.get<{ pagination: { total_items: number } }>("/applications", {
      key: managementKey,
    });

    expect(res.status).toBe(413);
    expect(res.body).toMatchObject({ ...problemShape, status: 413 });
    expect(list.body.pagination.total_items).toBe(1);
  });

  it("counts the body limit in bytes, not characters: at the limit is read, one byte over is 413", async () => {
    const api = client(svc.url);
    const { managementKey } = await createTenant(api, svc.rootKey);
    const [head, tail] = ['{"type":"public","name":"', '"}'];
    // A name of two-byte characters (and one "a" for an odd count) making the body `bytes` long.
    const bodyOf = (bytes: number) => {
      const room = bytes - head.length - tail.length;
      return `${head}${"é".repeat(Math.floor(room / 2))}${"a".repeat(room % 2)}${tail}`;
    };
    const limit = config().maxBodyBytes;

    const at = await api.post("/applications", { key: managementKey, rawBody: bodyOf(limit) });
    const over = await api.post("/applications", { key: managementKey, rawBody: bodyOf(limit + 1) });

    expect(Buffer.byteLength(bodyOf(limit + 1))).toBe(limit + 1);
    expect(at.status).toBe(400); // read and validated: the name is too long
    expect(JSON.stringify(at.body)).toMatch(/name/);
    expect(over.status).toBe(413);
  });

  it("answers a generic 500 with the request id and nothing of the failure", async () => {
    const api = client(svc.url);
    const { managementKey } = await createTenant(api, svc.rootKey);
    const tenants = svc.service.deps.tenants;
    // A message over several lines (SDK errors may echo values): the log keeps the stack's frames only.
    const spy = vi
      .spyOn(tenants, "getTenant")
      .mockRejectedValueOnce(new Error("boom: secret-value-123\nand on: 4242424242424242"));
    const logged = vi.spyOn(logger, "error");

    const res = await api.get("/tenants/self", { key: managementKey });

    spy.mockRestore();
    // Ids and times left out: a random request id holds "4242" about once in 230 runs.
    const lines = bodyText(logged.mock.calls);
    logged.mockRestore();
    expect(lines).toContain("Unhandled error");
    expect(lines).toMatch(/at /);
    expect(lines).not.toMatch(/boom|secret-value|4242/);
    expect(res.status).toBe(500);
    expect(res.body).toMatchObject({ ...problemShape, status: 500, request_id: expect.any(String) });
    expect(res.headers.get("svc-request-id")).toBe(res.body.request_id);
    expect(JSON.stringify(res.body)).not.toMatch(/boom|secret-value|at .*\.ts/);
  });
});

/** A new tenant's private key holding these token permissions. */
async function keyWith(permissions: string[]) {
  const api = client(svc.url);
  const { managementKey } = await createTenant(api, svc.rootKey);
  const app = await api.post<{ key: string }>("/applications", {
    key: managementKey,
    body: { name: "app", type: "private", permissions },
  });
  return { api, key: app.body.key };
}

describe("odd values the edge refuses", () => {
  it("refuses a number too large for a double instead of storing null (400, naming where)", async () => {
    const { api, key } = await keyWith(["token:create"]);
    const headers = { "content-type": "application/json" };
    const created = await api.post("/tokens", {
      key,
      headers,
      rawBody: '{"type":"token","data":{"amount":1e400}}',
    });
    // Before: 201, and the token held {"amount": null}.
    expect(created.status).toBe(400);
    expect(created.body).toMatchObject({
      ...problemShape,
      status: 400,
      errors: { "data.amount": [expect.any(String)] },
    });
    const withControl = await api.post("/tokens", {
      key,
      body: { id: "ab\u0000c", type: "token", data: "x" },
    });
    expect(withControl.status).toBe(400);
  });

  it("refuses an integer JSON numbers cannot keep exactly, in a create and a PATCH, instead of storing another", async () => {
    const { api, key } = await keyWith(["token:create", "token:update"]);
    const headers = { "content-type": "application/json" };
    const created = await api.post("/tokens", {
      key,
      headers,
      rawBody: '{"type":"token","data":{"account":12345678901234567891}}',
    });
    // Before: 201, and the token held {"account": 12345678901234567000}.
    expect(created.status).toBe(400);
    expect(created.body).toMatchObject({ status: 400, errors: { "data.account": [expect.any(String)] } });
    const kept = await api.post<{ id: string }>("/tokens", { key, body: { type: "token", data: { a: 1 } } });
    const patched = await api.patch(`/tokens/${kept.body.id}`, {
      key,
      headers: { "content-type": "application/merge-patch+json" },
      rawBody: '{"data":{"account":12345678901234567891}}',
    });
    expect(patched.status).toBe(400);
  });

  it("answers headers or a URL over Node's limit with problem+json (431), not a bare status line", async () => {
    const answer = await fetch(`${svc.url}/tokens?x=${"a".repeat(20_000)}`);
    expect(answer.status).toBe(431);
    expect(answer.headers.get("content-type")).toBe("application/problem+json");
    // As the gateway's own 413: `about:blank`, since no route answered.
    expect(await answer.json()).toMatchObject({ ...problemShape, type: "about:blank", status: 431 });
  });
});

describe("caching", () => {
  it("answers holding data say no-store unless the route chose otherwise (the Elements scripts are public)", async () => {
    const { api, key } = await keyWith(["token:create", "token:read"]);
    const created = await api.post<{ id: string }>("/tokens", {
      key,
      body: { type: "token", data: "secret" },
    });
    const read = await api.get(`/tokens/${created.body.id}`, { key });
    const missing = await api.get("/tokens/nope-nope", { key });
    // Before: no Cache-Control at all, so a browser kept revealed answers in its disk cache.
    for (const answer of [created, read, missing])
      expect(answer.headers.get("cache-control")).toBe("no-store");
    const script = await fetch(`${svc.url}/elements/v1/elements.js`);
    expect(script.headers.get("cache-control")).toBe("public, max-age=300");
  });
});

describe("system routes", () => {
  it("serves /healthz and an OpenAPI 3.1 document listing every public route", async () => {
    const api = client(svc.url);

    const health = await api.get("/healthz");
    const doc = await api.get<{ openapi: string; paths: Record<string, Record<string, unknown>> }>(
      "/openapi.json",
    );

    expect(health).toMatchObject({ status: 200, body: { status: "ok" } });
    expect(doc.body.openapi).toBe("3.1.0");
    expect(Object.keys(doc.body.paths)).toEqual(
      expect.arrayContaining(["/tenants", "/applications/{id}/keys/{keyId}", "/logs", "/logs/entity-types"]),
    );
    expect(doc.body.paths["/applications"]).toHaveProperty("post");
    expect(doc.body.paths).not.toHaveProperty("/_test/clock");
  });

  it("serves the document docs/api-reference.md is rendered from (npm run docs:api rewrites it)", async () => {
    const doc = await client(svc.url).get<ApiDocument>("/openapi.json");

    const committed = readFileSync(new URL("../../docs/api-reference.md", import.meta.url), "utf8");
    expect(renderApiReference(doc.body), "docs/api-reference.md is stale: run npm run docs:api").toBe(
      committed,
    );
  });

  it("moves the test clock only with the root key", async () => {
    const api = client(svc.url);
    const { managementKey } = await createTenant(api, svc.rootKey);

    const refused = await api.post("/_test/clock", { key: managementKey, body: { advance_seconds: 60 } });
    const before = Date.now();
    const moved = await api.post<{ now: string }>("/_test/clock", {
      key: svc.rootKey,
      body: { advance_seconds: 3600 },
    });

    expect(refused.status).toBe(401);
    expect(moved.status).toBe(200);
    expect(Date.parse(moved.body.now) - before).toBeGreaterThanOrEqual(3600 * 1000);
  });
});
