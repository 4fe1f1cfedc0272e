import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bodyText, client, createTenant } from "#test/support/http.ts";
import { useService } from "#test/support/service.ts";
import { revealEverything, type TokenBody, VISA } from "#test/support/tokens.ts";

/**
 * Attack: a caller who may use a token but never sees its value (it goes to a destination or a formula) reads
 * it from the errors: a filter's or a transform's message that depends on the data, or a status that does.
 * Also: one request that makes detokenization do unbounded work.
 */
const svc = useService({ allowPrivateDestinations: true });

let destination: Server;
let destinationUrl: string;
let forwarded = 0;

beforeAll(async () => {
  destination = createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      forwarded++;
      res.writeHead(200, { "content-type": "application/json" });
      res.end("{}");
    });
  });
  await new Promise<void>((resolve) => destination.listen(0, "127.0.0.1", resolve));
  destinationUrl = `http://127.0.0.1:${(destination.address() as AddressInfo).port}`;
});

afterAll(() => {
  destination.close();
});

const ECHO = "module.exports = async (req) => ({ raw: { args: req.args } });";

async function setup(requestTransform?: string) {
  const api = client(svc.url);
  const tenant = await createTenant(api, svc.rootKey);
  const app = await api.post<{ id: string; key: string }>("/applications", {
    key: tenant.managementKey,
    body: { name: "user", type: "private", permissions: ["token:create", "token:use"] },
  });
  const token = async (type: string, data: unknown) =>
    (await api.post<TokenBody>("/tokens", { key: app.body.key, body: { type, data } })).body.id;
  // Two tokens whose data fails card_exp for different reasons (month, then year).
  const badMonth = await token("token", { expiration_month: 13, expiration_year: 2030 });
  const badYear = await token("token", { expiration_month: 1, expiration_year: 99999 });
  const pan = await token("card_number", VISA);
  const formula = await api.post<{ id: string }>("/reactor-formulas", {
    key: tenant.managementKey,
    body: {
      name: "Echo",
      code: ECHO,
      configuration: [],
      request_parameters: [{ name: "v", type: "string", optional: true }],
    },
  });
  const reactor = await api.post<{ id: string }>("/reactors", {
    key: tenant.managementKey,
    body: {
      name: "echo",
      formula: { id: formula.body.id },
      configuration: {},
      application: { id: app.body.id },
    },
  });
  const proxy = await api.post<{ key: string }>("/proxies", {
    key: tenant.managementKey,
    body: {
      name: "open",
      destination_url: destinationUrl,
      require_auth: false,
      application: { id: app.body.id },
      ...(requestTransform ? { request_transform: { code: requestTransform } } : {}),
    },
  });
  expect(proxy.status, JSON.stringify(proxy.body)).toBe(201);
  const numbers = await api.post<{ id: string }>("/reactor-formulas", {
    key: tenant.managementKey,
    body: {
      name: "Numbers",
      code: ECHO,
      configuration: [],
      request_parameters: [
        { name: "n1", type: "number" },
        { name: "n2", type: "number" },
        { name: "clear", type: "number", optional: true },
      ],
    },
  });
  const numbersReactor = await api.post<{ id: string }>("/reactors", {
    key: tenant.managementKey,
    body: {
      name: "numbers",
      formula: { id: numbers.body.id },
      configuration: {},
      application: { id: app.body.id },
    },
  });
  const reactOn = (id: string) => (args: unknown) =>
    api.post<Record<string, unknown>>(`/reactors/${id}/react`, { key: app.body.key, body: { args } });
  const react = reactOn(reactor.body.id);
  const reactNumbers = reactOn(numbersReactor.body.id);
  const digits = await token("token", "12");
  const letters = await token("token", "ab");
  // Anyone holding the proxy key: no SVC-API-KEY.
  const invoke = (body: unknown) =>
    api.post<{ proxy_error?: Record<string, unknown> }>("/proxy", {
      headers: { "svc-proxy-key": proxy.body.key },
      body,
    });
  // The same tenant's reader: token:read that reveals (and token:use).
  const reader = await api.post<{ id: string; key: string }>("/applications", {
    key: tenant.managementKey,
    body: { name: "reader", type: "private", rules: revealEverything },
  });
  return {
    api,
    react,
    reactNumbers,
    invoke,
    badMonth,
    badYear,
    pan,
    digits,
    letters,
    reactAsReader: (args: unknown) =>
      api.post<Record<string, unknown>>(`/reactors/${reactor.body.id}/react`, {
        key: reader.body.key,
        body: { args },
      }),
  };
}

const withoutRequestId = (body: unknown) => {
  const { request_id: _, ...rest } = (body ?? {}) as Record<string, unknown>;
  return rest;
};

describe("attack: reading token data from detokenization errors", () => {
  it("answers a failing filter in reactor args the same way whatever the data", async () => {
    const { react, badMonth, badYear } = await setup();

    const month = await react({ v: `{{ token: ${badMonth} | card_exp }}` });
    const year = await react({ v: `{{ token: ${badYear} | card_exp }}` });

    expect(month.status).toBe(400);
    expect(year.status).toBe(month.status);
    expect(withoutRequestId(year.body)).toEqual(withoutRequestId(month.body));
    expect(JSON.stringify(withoutRequestId(month.body))).not.toMatch(/month|year|13|99999/);
  });

  it("answers a failing filter in a proxy body the same way whatever the data, sending nothing", async () => {
    const { invoke, badMonth, badYear } = await setup();
    const before = forwarded;

    const month = await invoke({ v: `{{ token: ${badMonth} | card_exp }}` });
    const year = await invoke({ v: `{{ token: ${badYear} | card_exp }}` });

    expect(month.status).toBe(400);
    expect(year.status).toBe(month.status);
    expect(withoutRequestId(year.body.proxy_error)).toEqual(withoutRequestId(month.body.proxy_error));
    expect(JSON.stringify(withoutRequestId(month.body))).not.toMatch(/month|year/);
    expect(forwarded).toBe(before);
  });

  it("answers an unknown token before any filter runs on another token's data", async () => {
    const { react, badMonth, pan } = await setup();

    const failing = await react({ v: `{{ token: ${badMonth} | card_exp }} {{ no-such-token }}` });
    const passing = await react({ v: `{{ token: ${pan} | last4 }} {{ no-such-token }}` });

    expect(failing.status).toBe(400);
    expect(withoutRequestId(failing.body)).toEqual(withoutRequestId(passing.body));
    expect(failing.body).toMatchObject({ type: expect.stringContaining("unknown-token") });
  });

  it("does not tell which detokenized reactor arg failed its parameter type, only the clear ones", async () => {
    const { reactNumbers, digits, letters } = await setup();

    const first = await reactNumbers({ n1: `{{ ${letters} }}`, n2: `{{ ${digits} }}`, clear: "x" });
    const second = await reactNumbers({ n1: `{{ ${digits} }}`, n2: `{{ ${letters} }}`, clear: "x" });

    expect(first.status).toBe(400);
    expect(withoutRequestId(second.body)).toEqual(withoutRequestId(first.body));
    expect(first.body.errors).toEqual({
      args: [expect.any(String)],
      "args.clear": ["must be a number"],
    });
  });

  it("still names a filter syntax error, which does not depend on the data", async () => {
    const { react, pan } = await setup();

    const res = await react({ v: `{{ token: ${pan} | no_such_filter }}` });

    expect(res.status).toBe(400);
    expect(JSON.stringify(res.body)).toContain("no_such_filter");
  });

  it("answers a proxy transform's runtime error generically with the request id, not its message", async () => {
    // A transform bug whose message quotes the detokenized value: "Cannot convert 4242…x to a BigInt".
    const { invoke, pan } = await setup(
      "module.exports = async (req) => { BigInt(req.args.body.n + 'x'); return { body: {}, headers: {} }; };",
    );
    const before = forwarded;

    const res = await invoke({ n: `{{ ${pan} }}` });

    expect(res.status).toBe(500);
    expect(res.body.proxy_error).toMatchObject({ status: 500, request_id: expect.any(String) });
    expect(bodyText(res.body)).not.toContain("4242");
    expect(JSON.stringify(res.body)).not.toContain("BigInt");
    expect(forwarded).toBe(before);
  });
});

describe("attack: reading token data through filters the caller chooses", () => {
  // Proxies review (28 Nov 2026): `slice: i, 1 | replace: "<d>", "<1,100 x>"` repeated 1,000 times outgrew the
  // request's 1 MiB exactly when digit i was d (400, nothing sent; else forwarded): a card number read back by
  // anyone holding a proxy key, 80 requests, with a destination that echoes nothing.
  const probe = (id: string, i: number, d: number) =>
    `{{ token: ${id} | slice: ${i}, 1 | replace: "${d}", "${"x".repeat(1100)}" }}`.repeat(1000);

  it("refuses a filter that branches on the data to a caller who may use the token but not read it", async () => {
    const { invoke, react, pan } = await setup();
    const before = forwarded;

    const answers = await Promise.all([4, 5].map((d) => invoke({ v: probe(pan, 0, d) })));
    const reacted = await react({ v: `{{ token: ${pan} | slice: 0, 1 }}` });
    const variable = await invoke({ v: `{{ token: ${pan} | pad_left: data, "0" }}` });

    for (const res of answers) {
      expect(res.status).toBe(403);
      expect(res.body.proxy_error).toMatchObject({ type: expect.stringContaining("filter-needs-read") });
    }
    expect(withoutRequestId(answers[0]?.body.proxy_error)).toEqual(
      withoutRequestId(answers[1]?.body.proxy_error),
    );
    expect(reacted.status).toBe(403);
    expect(variable.status).toBe(403); // an argument read from the data decides the size as well
    expect(forwarded).toBe(before);
  });

  it("still applies formatting filters for that caller, and any filter for one whose token:read reveals", async () => {
    const { invoke, react, reactAsReader, pan } = await setup();
    const before = forwarded;

    const formatted = await invoke({ v: `{{ token: ${pan} | card_mask: true, true, "*" }}` });
    const reacted = await react({ v: `{{ token: ${pan} | last4 | prepend: "x-" }}` });
    const shaped = await reactAsReader({ v: `{{ token: ${pan} | slice: 0, 1 | replace: "4", "four" }}` });

    expect(formatted.status).toBe(200);
    expect(forwarded).toBe(before + 1);
    expect(reacted.status).toBe(200);
    expect(reacted.body).toMatchObject({ raw: { args: { v: "x-4242" } } });
    expect(shaped.status).toBe(200);
    expect(shaped.body).toMatchObject({ raw: { args: { v: "four" } } });
  });
});

describe("attack: formatting filters composed into a computation on the data", () => {
  // Review of 28 Nov 2026, after FORMATTING_FILTERS: each of these read a whole card number back, with formatting
  // filters and literal arguments only (a Luhn-checking destination: detokenize-luhn-oracle.test.ts).
  const attacks = (id: string) => [
    // Character i as 10^d (its value as a length), against the 1 MiB limit.
    `{{ token: ${id} | prepend: '["' | append: '"]' | json: '$[0][3]' | prepend: '1e' | json: '$' }}`,
    // A JSONPath index into a string picks one character, for any destination to check.
    `{{ token: ${id} | json: '$[3]' }}`,
    `{{ token: ${id} | json: "$['3']" }}`,
    `{{ token: ${id} | json: '$..3' }}`,
    // A keyed hash of the first i+1 digits, one bit of it as a failure.
    `{{ token: ${id} | reveal: 4, 0, 'X' | hmac: 'k' | reveal: 0, 1, '0' | card_mask }}`,
    `{{ token: ${id} | hmac: 'k' | card_bin }}`,
    // The first n digits padded with digits of the caller's: a Luhn-checking destination answers their sum.
    `{{ token: ${id} | reveal: 7, 0, '0' }}`,
    `{{ token: ${id} | reveal_last: 3, ' ' }}`,
    `{{ token: ${id} | card_mask: false, false, '-' }}`,
    // Round 3: places of the caller's choosing, whatever the mask character: '&' ends a form field, U+001C is
    // whitespace to Python and Java (detokenize-luhn-oracle.test.ts).
    `{{ token: ${id} | reveal: 7, 0, '&' }}`,
    `{{ token: ${id} | reveal: 7, 0, '\u001c' }}`,
    `{{ token: ${id} | reveal_last: 3, '*' }}`,
    // Keyword arguments are not positional literals.
    `{{ token: ${id} | hmac: secret: 'k' }}`,
    // Round 4: a keyed hash with the caller's key, and encodings whose digits fall where the data puts them.
    `{{ token: ${id} | hmac: 'k' | prepend: 'h:' | escape }}`,
    `{{ token: ${id} | to_base64 }}`,
    `{{ token: ${id} | to_base16 }}`,
  ];

  it("refuses them to a caller who may use the token but not read it, through proxies and reactors", async () => {
    const { invoke, react, pan } = await setup();
    const before = forwarded;

    for (const expression of attacks(pan)) {
      const proxied = await invoke({ v: expression });
      const reacted = await react({ v: expression });
      expect(proxied.status, expression).toBe(403);
      expect(proxied.body.proxy_error).toMatchObject({ type: expect.stringContaining("filter-needs-read") });
      expect(reacted.status, expression).toBe(403);
    }
    expect(forwarded).toBe(before);
  });

  it("still formats: json by member name first, one formatting filter, then append, prepend and escapes", async () => {
    const { react, reactAsReader, pan } = await setup();
    const fine = [
      [`{{ token: ${pan} | card_mask: true, true | url_encode }}`, "42424242XXXX4242"],
      [`{{ token: ${pan} | reveal: 0, 4, '*' | prepend: 'card ' | append: '.' }}`, "card ************4242."],
      [`{{ token: ${pan} | pad_left: 18, '0' }}`, "004242424242424242"],
      [`{{ token: ${pan} | last4 }}`, "4242"],
    ] as const;
    for (const [expression, expected] of fine) {
      const res = await react({ v: expression });
      expect(res.status, `${expression}: ${JSON.stringify(res.body)}`).toBe(200);
      if (expected !== null) expect(res.body).toMatchObject({ raw: { args: { v: expected } } });
    }
    // A caller whose token:read reveals is not restricted.
    const indexed = await reactAsReader({
      v: `{{ token: ${pan} | prepend: '["' | append: '"]' | json: '$[0][3]' }}`,
    });
    expect(indexed.body).toMatchObject({ raw: { args: { v: "2" } } });
  });
});

describe("attack: unbounded detokenization in one request", () => {
  it("refuses more than 1,000 expressions per request with a 400 problem", async () => {
    const { react, invoke, pan } = await setup();
    const many = Array.from({ length: 1001 }, () => `{{ ${pan} }}`).join(",");

    const reacted = await react({ v: many });
    const proxied = await invoke({ v: many });

    expect(reacted.status).toBe(400);
    expect(reacted.headers.get("content-type")).toContain("application/problem+json");
    expect(reacted.body).toMatchObject({ type: expect.stringContaining("too-many-expressions") });
    expect(proxied.status).toBe(400);
    expect(proxied.body.proxy_error).toMatchObject({ type: expect.stringContaining("too-many-expressions") });
  });

  it("refuses more than 1 MiB of detokenized output per request with a 400 problem", async () => {
    const { react, invoke, pan } = await setup();
    const padded = `{{ token: ${pan} | pad_left: 65536, '0' }}`;
    const huge = Array.from({ length: 17 }, () => padded).join("");

    const reacted = await react({ v: huge });
    const proxied = await invoke({ v: huge });
    const fine = await react({ v: Array.from({ length: 15 }, () => padded).join("") });

    expect(reacted.status).toBe(400);
    expect(reacted.body).toMatchObject({ type: expect.stringContaining("detokenized-too-large") });
    expect(proxied.status).toBe(400);
    expect(proxied.body.proxy_error).toMatchObject({
      type: expect.stringContaining("detokenized-too-large"),
    });
    expect(fine.status).toBe(200);
  });
});
