import { describe, expect, it } from "vitest";
import {
  codeAnswerHeaders,
  HOP_BY_HOP_HEADERS,
  outboundHeaders,
  proxyOptionHeaders,
  responseHeaders,
  transformVisibleHeaders,
} from "#shared/domain/proxies/headers.ts";

describe("outboundHeaders", () => {
  it("forwards destination headers such as Authorization, Content-Type and custom ones", () => {
    const incoming = {
      authorization: "Bearer sk_test_123",
      "content-type": "application/json",
      accept: "*/*",
      "x-request-id": "abc",
      "idempotency-key": "k-1",
    };

    const headers = outboundHeaders(incoming);

    expect(headers).toEqual(incoming);
  });

  it("drops every svc-* header, whatever its case", () => {
    const headers = outboundHeaders({
      "svc-api-key": "key_pvt_secret",
      "SVC-PROXY-KEY": "key_prx_secret",
      "Svc-Idempotency-Key": "x",
      "svc-anything": "y",
      "x-kept": "1",
    });

    expect(headers).toEqual({ "x-kept": "1" });
  });

  it("drops hop-by-hop headers, host and content-length", () => {
    const incoming: Record<string, string> = {
      host: "vault.example.com",
      "content-length": "999",
      "x-kept": "1",
    };
    for (const name of HOP_BY_HOP_HEADERS) incoming[name] = "v";

    const headers = outboundHeaders(incoming);

    expect(headers).toEqual({ "x-kept": "1" });
    expect([...HOP_BY_HOP_HEADERS].sort()).toEqual(
      [
        "connection",
        "keep-alive",
        "proxy-authenticate",
        "proxy-authorization",
        "proxy-connection",
        "te",
        "trailer",
        "transfer-encoding",
        "upgrade",
      ].sort(),
    );
  });

  it("drops the headers the incoming Connection header names (RFC 9110 §7.6.1)", () => {
    const headers = outboundHeaders({ connection: "keep-alive, X-Hop", "x-hop": "1", "x-end": "2" });

    expect(headers).toEqual({ "x-end": "2" });
  });

  it("injects SVC-PROXY-CONNECTION and SVC-PROXY-KEEP-ALIVE as Connection and Keep-Alive", () => {
    const headers = outboundHeaders({
      connection: "close",
      "keep-alive": "timeout=1",
      "svc-proxy-connection": "keep-alive",
      "svc-proxy-keep-alive": "timeout=5, max=100",
    });

    expect(headers).toEqual({ connection: "keep-alive", "keep-alive": "timeout=5, max=100" });
  });

  it("accepts a single token Keep-Alive and trims the injected values", () => {
    const headers = outboundHeaders({
      "svc-proxy-connection": " close ",
      "svc-proxy-keep-alive": "timeout=5",
    });

    expect(headers).toEqual({ connection: "close", "keep-alive": "timeout=5" });
  });

  it.each([
    ["a list", "keep-alive, upgrade", "timeout=5,,max=1"],
    ["spaces inside", "keep alive", "timeout = 5"],
    ["separators", "keep-alive;x", 'timeout="5"'],
    ["control characters", "keep-alive\tx", "timeout=5\u0000"],
    ["an empty value", "", " "],
    ["an overlong value", "a".repeat(129), `timeout=${"9".repeat(130)}`],
  ])("drops injected values with %s", (_, connection, keepAlive) => {
    const headers = outboundHeaders({
      "svc-proxy-connection": connection,
      "svc-proxy-keep-alive": keepAlive,
      "x-kept": "1",
    });

    expect(headers).toEqual({ "x-kept": "1" });
  });

  it("drops headers with names or values Node's http client would throw on", () => {
    const headers = outboundHeaders({
      "bad name": "1",
      ":authority": "example.com",
      "x-crlf": "a\r\nx-injected: 1",
      "x-nul": "a\u0000b",
      "x-latin1": "caf\u00e9",
      "x-tab": "a\tb",
    });

    expect(headers).toEqual({ "x-latin1": "caf\u00e9", "x-tab": "a\tb" });
  });

  it("lower-cases names and joins repeated fields with a comma", () => {
    const headers = outboundHeaders({ "X-Trace": "1", "x-trace": "2", Accept: "text/plain" });

    expect(headers).toEqual({ "x-trace": "1, 2", accept: "text/plain" });
  });

  it("does not change its input", () => {
    const incoming = Object.freeze({ "svc-api-key": "k", authorization: "Basic x" });

    outboundHeaders(incoming);

    expect(incoming).toEqual({ "svc-api-key": "k", authorization: "Basic x" });
  });
});

describe("responseHeaders", () => {
  it("keeps end-to-end headers, repeated ones as an array, content-encoding included", () => {
    const headers = responseHeaders({
      "content-type": "application/octet-stream",
      "content-encoding": "gzip",
      "www-authenticate": "Bearer",
      "x-custom": ["yes", "again"],
    });

    expect(headers).toEqual({
      "content-type": "application/octet-stream",
      "content-encoding": "gzip",
      "www-authenticate": "Bearer",
      "x-custom": ["yes", "again"],
    });
  });

  it("drops Access-Control-* headers: which origins may read the vault's answers is the vault's CORS policy", () => {
    const headers = responseHeaders({
      "Access-Control-Allow-Origin": "*",
      "access-control-allow-credentials": "true",
      "Access-Control-Expose-Headers": "x-secret",
      "x-end": "1",
    });
    expect(headers).toEqual({ "x-end": "1" });
  });

  it("drops Set-Cookie: the answer comes from the vault's own origin", () => {
    const headers = responseHeaders({ "set-cookie": ["a=1", "b=2"], "Set-Cookie2": "c=3", "x-end": "1" });

    expect(headers).toEqual({ "x-end": "1" });
  });

  it("drops every Proxy-* header and those named by any Connection header, in any case", () => {
    const headers = responseHeaders({
      "Proxy-Authenticate": "Basic",
      "proxy-anything": "1",
      Connection: ["close", "X-Hop"],
      "x-hop": "1",
      "x-end": "2",
    });

    expect(headers).toEqual({ "x-end": "2" });
  });

  it("drops hop-by-hop headers, content-length and the headers Connection names", () => {
    const destination: Record<string, string> = {
      "content-length": "12",
      connection: "close, x-hop",
      "x-hop": "1",
      "x-end": "2",
    };
    for (const name of HOP_BY_HOP_HEADERS) destination[name] ??= "v";

    const headers = responseHeaders(destination);

    expect(headers).toEqual({ "x-end": "2" });
  });

  it("drops svc-* headers so a destination cannot fake the service's own headers", () => {
    const headers = responseHeaders({
      "svc-proxy-destination-status": "200",
      "SVC-Request-Id": "fake",
      "x-end": "1",
    });

    expect(headers).toEqual({ "x-end": "1" });
  });

  it("skips undefined values and copies arrays", () => {
    const values = ["a=1"];

    const headers = responseHeaders({ "x-list": values, "x-none": undefined });
    values.push("b=2");

    expect(headers).toEqual({ "x-list": ["a=1"] });
  });
});

describe("transformVisibleHeaders and proxyOptionHeaders", () => {
  const incoming = {
    "svc-api-key": "key_pvt_secret",
    "SVC-PROXY-KEY": "key_prx_secret",
    "Svc-Proxy-Connection": "keep-alive",
    "svc-proxy-keep-alive": "timeout=5",
    authorization: "Bearer sk_test_123",
  };

  it("shows tenant code every header but the service's own, whatever their case", () => {
    expect(transformVisibleHeaders(incoming)).toEqual({ authorization: "Bearer sk_test_123" });
  });

  it("keeps only the proxy options aside, lower-cased, for outboundHeaders", () => {
    const options = proxyOptionHeaders(incoming);

    expect(options).toEqual({ "svc-proxy-connection": "keep-alive", "svc-proxy-keep-alive": "timeout=5" });
    expect(outboundHeaders({ ...transformVisibleHeaders(incoming), ...options })).toEqual({
      authorization: "Bearer sk_test_123",
      connection: "keep-alive",
      "keep-alive": "timeout=5",
    });
  });
});

describe("codeAnswerHeaders (a formula's CustomHttpResponseError headers)", () => {
  it("keeps token names and sendable values, then applies the one response filter", () => {
    const headers = codeAnswerHeaders({
      "x-ok": "1",
      "x-number": 2,
      "bad name": "x",
      "x-crlf": "a\r\nset-cookie: b=1",
      "x-null": null,
      "set-cookie": "a=1",
      "content-length": "1",
      "svc-request-id": "fake",
      connection: "x-ok",
    });

    expect({ ...headers }).toEqual({ "x-number": "2" });
  });

  it("answers nothing for a value that is not an object", () => {
    for (const value of [undefined, null, "x", 1, ["a"]]) expect({ ...codeAnswerHeaders(value) }).toEqual({});
  });
});
