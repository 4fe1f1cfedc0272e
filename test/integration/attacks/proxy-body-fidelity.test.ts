/**
 * Review round 6: a proxied body reached its destination changed. JSON was parsed and written again (numbers
 * beyond 2^53, `1.10`, duplicate keys, spacing), text decoded and encoded again (a Latin-1 form's `é`), a
 * gzip body read as text, and locally a body without Content-Type decoded as UTF-8. A payment's body, or an
 * HMAC over it, must arrive as sent, but for the expressions replaced.
 */
import type { IncomingMessage } from "node:http";
import { gzipSync } from "node:zlib";
import { describe, expect, it } from "vitest";
import { useLocalServer } from "#test/support/local-server.ts";
import { useService } from "#test/support/service.ts";
import { type TokenBody, tenantWithOwner, VISA } from "#test/support/tokens.ts";

const svc = useService({ allowPrivateDestinations: true });

const received: { headers: IncomingMessage["headers"]; body: Buffer }[] = [];
const destination = useLocalServer((req, res, body) => {
  received.push({ headers: req.headers, body });
  res.writeHead(200, { "content-type": "text/plain" });
  res.end("ok");
});

async function setup() {
  const { api, tenant, owner: user } = await tenantWithOwner(svc);
  const proxy = await api.post<{ key: string }>("/proxies", {
    key: tenant.managementKey,
    body: { name: "fidelity", destination_url: destination.url },
  });
  const token = await api.post<TokenBody>("/tokens", {
    key: user,
    body: { type: "card_number", data: VISA },
  });
  /** Sends `body` through the proxy; answers the bytes the destination received. */
  const send = async (body: Buffer | string, headers: Record<string, string> = {}) => {
    const res = await fetch(`${svc.url}/proxy`, {
      method: "POST",
      headers: { "svc-proxy-key": proxy.body.key, "svc-api-key": user, ...headers },
      body,
    });
    expect(res.status).toBe(200);
    return (received.at(-1) as { body: Buffer }).body;
  };
  return { send, tokenId: token.body.id };
}

const json = { "content-type": "application/json" };
const PAYMENT = `{"order_id": 1234567890123456789, "id":9007199254740993,  "rate": 1.10, "k":1, "k":2, "card": "X"}`;

describe("attack: a proxied body changed on its way", () => {
  it("JSON: only the expression changes; big numbers, 1.10, duplicate keys and spacing arrive as sent", async () => {
    const { send, tokenId } = await setup();
    expect((await send(PAYMENT, json)).toString("utf8")).toBe(PAYMENT);
    const withToken = PAYMENT.replace('"X"', `"{{ ${tokenId} }}"`);
    // Before: {"order_id":1234567890123456800,"id":9007199254740992,"rate":1.1,"k":2,"card":"4242…"}
    expect((await send(withToken, json)).toString("utf8")).toBe(PAYMENT.replace('"X"', `"${VISA}"`));
  });

  it("an expression written with JSON escapes is replaced, as the audit named it (before the splice's fix: sent as written)", async () => {
    const { send, tokenId } = await setup();
    const escaped = `{"card":"\\u007b\\u007b ${tokenId} \\u007d\\u007d","n":1.10}`;
    expect((await send(escaped, json)).toString("utf8")).toBe(`{"card":"${VISA}","n":1.10}`);
  });

  it("a Latin-1 form without expressions, gzip JSON, and bytes without Content-Type arrive byte for byte", async () => {
    const { send } = await setup();
    const form = Buffer.from("name=Jos\xe9&amount=10", "latin1");
    const formType = { "content-type": "application/x-www-form-urlencoded; charset=iso-8859-1" };
    expect((await send(form, formType)).equals(form)).toBe(true);
    const gzip = gzipSync(Buffer.from('{"amount":100,"card":"{{ not-a-token }}"}'));
    expect((await send(gzip, { ...json, "content-encoding": "gzip" })).equals(gzip)).toBe(true);
    const bytes = Buffer.from([0x00, 0xff, 0xfe, 0x80, 0x41]);
    expect((await send(bytes)).equals(bytes)).toBe(true);
  });
});
