import { describe, expect, it } from "vitest";
import {
  type CodeRequest,
  DEFAULT_OUTBOUND_LIMITS,
  destinationRefusal,
  hostAllowed,
  OutboundError,
  RunBudget,
  readCodeRequest,
  redirected,
} from "#shared/sandbox/outbound-request.ts";

const request = (overrides: Partial<CodeRequest> = {}): CodeRequest => ({
  url: new URL("https://api.partner.example/charge"),
  method: "POST",
  headers: [
    ["authorization", "Bearer secret"],
    ["content-type", "application/json"],
  ],
  body: Buffer.from("{}"),
  redirect: "follow",
  timeoutMs: undefined,
  ...overrides,
});

describe("readCodeRequest", () => {
  it("keeps the code's headers but drops those the host sets (framing, host, encodings)", () => {
    const read = readCodeRequest(
      JSON.stringify({
        url: "https://a.example/x",
        method: "post",
        headers: [
          ["X-Key", "1"],
          ["Host", "evil.example"],
          ["Transfer-Encoding", "chunked"],
          ["Accept-Encoding", "br"],
        ],
        body: Buffer.from("hi").toString("base64"),
      }),
    );

    expect(read.method).toBe("POST");
    expect(read.headers).toEqual([["x-key", "1"]]);
    expect(read.body?.toString()).toBe("hi");
  });

  it.each([
    [{ url: "/relative", method: "GET" }, "the URL is not absolute"],
    [{ url: "https://a.example", method: "CONNECT" }, "the method CONNECT is not allowed"],
    [
      { url: "https://a.example", method: "GET", headers: [["x", "a\r\nb: c"]] },
      "a header name or value is invalid",
    ],
    [
      { url: "https://a.example", method: "GET", headers: [["x", "5 €"]] },
      "a header name or value is invalid",
    ],
    [{ method: "GET" }, "the request is malformed"],
  ])("refuses %j", (raw, message) => {
    expect(() => readCodeRequest(JSON.stringify(raw))).toThrow(message);
  });
});

describe("allowed hosts", () => {
  const allowed = ["api.partner.example", "*.files.example", "127.0.0.1:8443"];

  it.each([
    ["https://api.partner.example/x", true],
    ["https://API.Partner.Example./x", true],
    ["https://api.partner.example:444/x", true],
    ["https://eu.files.example/x", true],
    ["https://files.example/x", false],
    ["https://api.partner.example.evil.example/x", false],
    ["https://127.0.0.1:8443/x", true],
    ["https://127.0.0.1/x", false],
  ])("%s → %s", (url, expected) => {
    expect(hostAllowed(new URL(url), allowed)).toBe(expected);
  });

  it("refuses other schemes, credentials, http where https is required, and hosts off the list", () => {
    const policy = { requireHttps: true };
    expect(destinationRefusal(new URL("ftp://a.example"), policy, undefined)).toBe(
      "only http and https are allowed",
    );
    expect(destinationRefusal(new URL("http://a.example"), policy, undefined)).toBe("only https is allowed");
    expect(destinationRefusal(new URL("https://u:p@a.example"), policy, undefined)).toBe(
      "URLs must not carry credentials",
    );
    expect(destinationRefusal(new URL("https://a.example"), policy, [])).toBe(
      "a.example is not one of the allowed hosts",
    );
    expect(destinationRefusal(new URL("https://a.example"), policy, undefined)).toBeUndefined();
  });
});

describe("redirected", () => {
  it("turns a 303 (and a 302 after POST) into a GET without body or content headers", () => {
    for (const status of [302, 303]) {
      const next = redirected(request(), status, "/receipt");

      expect(next.method).toBe("GET");
      expect(next.body).toBeUndefined();
      expect(next.url.href).toBe("https://api.partner.example/receipt");
      expect(next.headers).toEqual([["authorization", "Bearer secret"]]);
    }
  });

  it("keeps method and body on a 307 but leaves credentials behind on another origin", () => {
    const next = redirected(request(), 307, "https://other.example/charge");

    expect(next.method).toBe("POST");
    expect(next.body?.toString()).toBe("{}");
    expect(next.headers).toEqual([["content-type", "application/json"]]);
  });
});

describe("RunBudget", () => {
  const limits = {
    ...DEFAULT_OUTBOUND_LIMITS,
    maxRequests: 2,
    maxBytesOut: 10,
    maxBytesIn: 20,
    timeoutMs: 1000,
  };

  it("counts requests and bytes out before a request starts", () => {
    const budget = new RunBudget(limits, 10_000, () => 0);

    budget.startRequest(request({ body: Buffer.alloc(6) }));
    const tooMuch = () => budget.startRequest(request({ body: Buffer.alloc(6) }));

    expect(tooMuch).toThrow(
      new OutboundError(
        "request to https://api.partner.example refused: a run may send at most 10 bytes",
        "max-size",
      ),
    );
    budget.startRequest(request({ body: undefined }));
    expect(() => budget.startRequest(request({ body: undefined }))).toThrow(
      "a run may make at most 2 requests",
    );
  });

  it("counts bytes in as they arrive", () => {
    const budget = new RunBudget(limits, 10_000, () => 0);

    budget.receive(15, "https://a.example");

    expect(() => budget.receive(6, "https://a.example")).toThrow("a run may receive at most 20 bytes");
  });

  it("gives a request the shortest of the limit, the code's timeout and the run's time left (less a margin)", () => {
    let now = 0;
    const budget = new RunBudget({ ...limits, maxRequests: 10 }, 1500, () => now);

    expect(budget.startRequest(request())).toBe(1000);
    expect(budget.startRequest(request({ timeoutMs: 250 }))).toBe(250);
    now = 1000;
    expect(budget.startRequest(request())).toBe(400);
    now = 1450;
    expect(() => budget.startRequest(request())).toThrow("the run has no time left");
  });
});
