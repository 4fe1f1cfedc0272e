import { describe, expect, it, vi } from "vitest";
import { routeList } from "#shared/api/index.ts";
import { loadConfig } from "#shared/config.ts";
import {
  DomainError,
  notFound,
  tooManyRequests,
  unauthorized,
  validationError,
} from "#shared/domain/errors.ts";
import { RouteMatcher } from "#shared/http/match.ts";
import { errorHandler } from "#shared/http/middleware/error-handler.ts";
import { parseQuery } from "#shared/http/middleware/route-and-validate.ts";
import { envelope } from "#shared/http/pagination.ts";
import type { SvcRequest } from "#shared/http/request-state.ts";
import { jsonResult } from "#shared/http/request-state.ts";
import { logger } from "#shared/logger.ts";

describe("RouteMatcher", () => {
  const matcher = new RouteMatcher(routeList);

  it("prefers a literal segment over a parameter, like API Gateway", () => {
    expect(matcher.match("GET", "/applications/key")).toMatchObject({ routeKey: "GET /applications/key" });
    expect(matcher.match("GET", "/applications/abc")).toMatchObject({
      routeKey: "GET /applications/{id}",
      pathParameters: { id: "abc" },
    });
  });

  it("extracts several parameters and decodes them", () => {
    expect(matcher.match("DELETE", "/applications/a%20b/keys/k1")).toMatchObject({
      pathParameters: { id: "a b", keyId: "k1" },
    });
  });

  it("reports the allowed methods for a known path and nothing for an unknown one", () => {
    expect(matcher.match("PATCH", "/applications")).toEqual({
      allowed: expect.arrayContaining(["GET", "POST"]),
    });
    expect(matcher.match("GET", "/nowhere")).toBeUndefined();
  });

  it("gives a greedy {proxy+} segment the rest of the path, and only a path that has one", () => {
    expect(matcher.match("POST", "/proxy/v1/charges/ch_1")).toEqual({
      route: expect.objectContaining({ path: "/proxy/{proxy+}" }),
      routeKey: "POST /proxy/{proxy+}",
      pathParameters: { proxy: "v1/charges/ch_1" },
    });
    expect(matcher.match("POST", "/proxy")).toMatchObject({ routeKey: "POST /proxy", pathParameters: {} });
  });
});

describe("parseQuery", () => {
  it("keeps repeated parameters as arrays", () => {
    expect(parseQuery("id=a&id=b&type=card&x=")).toEqual({ id: ["a", "b"], type: "card", x: "" });
    expect(parseQuery(undefined)).toEqual({});
  });
});

describe("envelope", () => {
  it("computes total pages and echoes page and size", () => {
    expect(envelope({ items: [1, 2], total: 41 }, { page: 3, size: 20 }).pagination).toEqual({
      total_items: 41,
      page_number: 3,
      page_size: 20,
      total_pages: 3,
    });
    expect(envelope({ items: [], total: 0 }, { page: 1, size: 20 }).pagination.total_pages).toBe(0);
  });

  it("refuses a page larger than a Lambda result carries (reactors' code) with a size that fits", () => {
    // Escaped again in the function's result: 20 of these come to 10 MB there, past Lambda's 6 MB.
    const reactors = Array.from({ length: 20 }, (_, i) => ({ id: `r${i}`, code: '"'.repeat(128 * 1024) }));
    let refused: unknown;
    try {
      envelope({ items: reactors, total: 20 }, { page: 1, size: 20 });
    } catch (error) {
      refused = error;
    }
    expect(refused).toBeInstanceOf(DomainError);
    expect((refused as DomainError).kind).toBe("invalid");
    const fits = Number(/size=(\d+) fits/.exec((refused as DomainError).message)?.[1]);
    expect(fits).toBeGreaterThan(0);
    expect(fits).toBeLessThan(20);
    const page = envelope({ items: reactors.slice(0, fits), total: 20 }, { page: 1, size: fits });
    const result = JSON.stringify({ statusCode: 200, body: JSON.stringify(page) });
    expect(Buffer.byteLength(result)).toBeLessThanOrEqual(6 * 1024 * 1024);
  });
});

describe("jsonResult", () => {
  it("refuses, as a problem naming why, an answer a Lambda result could not carry (its quotes escaped again)", () => {
    // 3.2 MB of quotes: 6.4 MB of JSON, and more once escaped again in the function's result.
    let refused: unknown;
    try {
      jsonResult(200, { data: '"'.repeat(3_200_000) });
    } catch (error) {
      refused = error;
    }
    expect(refused).toBeInstanceOf(DomainError);
    expect((refused as DomainError).code).toBe("answer-too-large");
    expect(jsonResult(200, { data: "x".repeat(3_000_000) }).body).toHaveLength(3_000_011);
    // 2.1 million 3-byte characters: 6.3 MB of UTF-8 in 2.1 million UTF-16 units (review round 8).
    expect(() => jsonResult(200, { data: "中".repeat(2_100_000) })).toThrow(DomainError);
  });
});

describe("configuration", () => {
  it("refuses the test clock and a plaintext root key in AWS mode", () => {
    const aws = { SVC_MODE: "aws", SVC_TABLE_NAME: "svc", SVC_SANDBOX: "none" };
    expect(() => loadConfig({ ...aws, SVC_TEST_CLOCK: "1" })).toThrow(/SVC_TEST_CLOCK/);
    expect(() => loadConfig({ ...aws, SVC_ROOT_KEY: "x".repeat(20) })).toThrow(/SVC_ROOT_KEY/);
    expect(() => loadConfig({ SVC_MODE: "aws" })).toThrow(/SVC_TABLE_NAME/);
  });

  it("keeps private proxy destinations off unless SVC_PROXY_ALLOW_PRIVATE is set, locally too", () => {
    expect(loadConfig({}).proxyAllowPrivate).toBe(false);
    expect(loadConfig({ SVC_PROXY_ALLOW_PRIVATE: "1" }).proxyAllowPrivate).toBe(true);
    expect(loadConfig({ SVC_PROXY_ALLOW_PRIVATE: "0" }).proxyAllowPrivate).toBe(false);
    expect(
      loadConfig({ SVC_MODE: "aws", SVC_TABLE_NAME: "svc", SVC_SANDBOX: "none" }).proxyAllowPrivate,
    ).toBe(false);
    expect(loadConfig({}).mode).toBe("local");
    expect(
      loadConfig({ AWS_LAMBDA_FUNCTION_NAME: "f", SVC_TABLE_NAME: "svc", SVC_SANDBOX: "none" }).mode,
    ).toBe("aws");
  });

  it("reads the sandbox runner definition when all of SVC_RUNNER_* are set, and refuses a partial one", () => {
    const runner = {
      SVC_RUNNER_PREFIX: "SvcVault-ab12cd-",
      SVC_RUNNER_ROLE_ARN: "arn:aws:iam::123456789012:role/runner",
      SVC_RUNNER_CODE_BUCKET: "cdk-assets",
      SVC_RUNNER_CODE_KEY: "abc.zip",
      SVC_RUNNER_RUNTIME: "nodejs24.x",
      SVC_RUNNER_HANDLER: "index.handler",
      SVC_RUNNER_MEMORY_MB: "1024",
      SVC_RUNNER_TIMEOUT_SECONDS: "240",
      SVC_RUNNER_ARCHITECTURE: "arm64",
      SVC_RUNNER_LOG_GROUP: "runners",
      SVC_STACK_NAME: "SvcVault",
    };
    const aws = { SVC_MODE: "aws", SVC_TABLE_NAME: "svc" };
    expect(loadConfig({ ...aws, ...runner }).runner).toEqual({
      prefix: "SvcVault-ab12cd-",
      roleArn: "arn:aws:iam::123456789012:role/runner",
      codeBucket: "cdk-assets",
      codeKey: "abc.zip",
      runtime: "nodejs24.x",
      handler: "index.handler",
      memoryMb: 1024,
      timeoutSeconds: 240,
      architecture: "arm64",
      logGroup: "runners",
      stackName: "SvcVault",
    });
    expect(loadConfig({ ...aws, SVC_SANDBOX: "none" }).runner).toBeUndefined();
    const { SVC_RUNNER_CODE_KEY: _key, ...partial } = runner;
    expect(() => loadConfig({ ...aws, ...partial })).toThrow(/SVC_RUNNER_CODE_KEY/);
    expect(() => loadConfig({ ...aws, ...runner, SVC_RUNNER_PREFIX: "x".repeat(20) })).toThrow(/PREFIX/);
  });
});

describe("errorHandler", () => {
  const request = (error: unknown) =>
    ({ error, context: { svc: { requestId: "req-1" } }, response: undefined }) as unknown as SvcRequest;

  it("maps a validation error to its problem, with field errors and headers", async () => {
    const req = request(validationError("bad", { name: ["required"] }));

    await errorHandler().onError?.(req);

    expect(req.response?.statusCode).toBe(400);
    expect(req.response?.headers?.["content-type"]).toBe("application/problem+json");
    expect(JSON.parse(String(req.response?.body))).toMatchObject({
      status: 400,
      errors: { name: ["required"] },
    });
  });

  it("logs an unknown error with the request id but never its message, and answers a generic 500", async () => {
    const spy = vi.spyOn(logger, "error").mockImplementation(() => undefined);
    const req = request(new Error("card 4242424242424242 failed"));

    await errorHandler().onError?.(req);

    expect(req.response?.statusCode).toBe(500);
    expect(String(req.response?.body)).not.toContain("4242");
    const logged = JSON.stringify(spy.mock.calls);
    expect(logged).toContain("req-1");
    expect(logged).not.toContain("4242424242424242 failed");
    spy.mockRestore();
  });

  it("answers a domain error by its kind: status, problem type and the headers the kind needs", async () => {
    const answer = async (error: unknown) => {
      const req = request(error);
      await errorHandler().onError?.(req);
      return {
        status: req.response?.statusCode,
        headers: req.response?.headers,
        body: JSON.parse(String(req.response?.body)),
      };
    };

    const unauthenticated = await answer(unauthorized());
    expect(unauthenticated).toMatchObject({ status: 401, headers: { "www-authenticate": "SVC-API-KEY" } });
    expect(unauthenticated.body.type).toBe("https://svc-vault.dev/problems/unauthorized");
    const limited = await answer(tooManyRequests(7));
    expect(limited).toMatchObject({
      status: 429,
      headers: { "retry-after": "7" },
      body: { title: "Too Many Requests" },
    });
    expect(await answer(notFound("The token"))).toMatchObject({
      status: 404,
      body: { type: "https://svc-vault.dev/problems/not-found", detail: "The token was not found." },
    });
    // A status tenant code chose is answered as it is, with the code's own title and slug.
    const chosen = new DomainError("invalid", "no", {
      code: "reactor-error",
      title: "TeapotError",
      statusFromCode: 418,
    });
    expect(await answer(chosen)).toMatchObject({
      status: 418,
      body: { type: "https://svc-vault.dev/problems/reactor-error", title: "TeapotError", status: 418 },
    });
  });
});
