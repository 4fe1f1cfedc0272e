/**
 * Availability review (28 Nov 2026): what a proxy's destination may answer. The proxy took up to 10 MB, answered as
 * base64 in the function's result: a Lambda result holds at most 6 MB (6,291,456 bytes), so in AWS an answer above
 * about 4.5 MB was no 502 `proxy_error` but a failed invocation (API Gateway's bare 500, a Lambda error alarm), and
 * locally one call held some 33 MB (the answer, its base64, the gateway's decoded copy) on the process every tenant
 * shares. A response transform's JSON answer was then parsed on that process, outside the run's time (V3, stop 46),
 * and the headers a transform returned were not counted at all (review round 7).
 */
import { describe, expect, it } from "vitest";
import { charactersParsed } from "#test/support/counting.ts";
import { client } from "#test/support/http.ts";
import { useLocalServer } from "#test/support/local-server.ts";
import { openProxy } from "#test/support/proxies.ts";
import { useService } from "#test/support/service.ts";

const svc = useService({ allowPrivateDestinations: true });
/** Lambda's synchronous result limit (API Gateway's Lambda integration). */
const LAMBDA_RESULT_BYTES = 6 * 1024 * 1024;

// Answers `/<n>` with n bytes of JSON: an array of small objects.
const destination = useLocalServer((req, res) => {
  const size = Number(req.url?.split("/").at(-1));
  const item = '{"a":1},';
  const body = `[${item.repeat(Math.floor((size - 10) / item.length))}{"a":1}]`;
  res.writeHead(200, { "content-type": "application/json" });
  res.end(body);
});

describe("attack: a destination's large answer", () => {
  it("answers a 502 proxy_error for an answer the function's result could not carry in AWS, and passes 3 MB", async () => {
    const api = client(svc.url);
    const key = await openProxy(svc.url, svc.rootKey, destination.url);
    const call = (size: number) =>
      api.call<{ proxy_error?: { code?: string } }>("GET", `/proxy/${size}`, {
        headers: { "svc-proxy-key": key },
      });

    const small = await call(3 * 1024 * 1024);
    const large = await call(5 * 1024 * 1024);

    expect(small.status).toBe(200);
    // 5 MB as base64 is 6.7 MB: past what a Lambda result holds.
    expect(Math.ceil((5 * 1024 * 1024) / 3) * 4).toBeGreaterThan(LAMBDA_RESULT_BYTES);
    expect(large.status).toBe(502);
    expect(JSON.stringify(large.body.proxy_error)).toContain("response-too-large");
  }, 60_000);

  it("has the sandbox parse a response transform's JSON answer, not the process every tenant shares", async () => {
    const api = client(svc.url);
    const key = await openProxy(svc.url, svc.rootKey, destination.url, {
      response_transform: {
        code: `module.exports = async (req) => ({
          body: { items: req.args.body.length, first: req.args.body[0] },
          headers: { "content-type": "application/json" },
        });`,
      },
    });
    const { result: res, chars: parsed } = await charactersParsed(() =>
      api.call<{ items: number; first: unknown }>("GET", `/proxy/${3 * 1024 * 1024}`, {
        headers: { "svc-proxy-key": key },
      }),
    );

    expect(res.status).toBe(200);
    // The code got the answer as a value (an array of 393,215 objects)...
    expect(res.body).toEqual({ items: 393_215, first: { a: 1 } });
    // ...parsed in the sandbox's process: here only the service's own small JSON (the transform's answer).
    expect(parsed).toBeLessThan(100_000);
  }, 60_000);

  it("answers within a Lambda result when a response transform adds megabytes of headers to a 4 MiB body", async () => {
    const key = await openProxy(svc.url, svc.rootKey, destination.url, {
      response_transform: {
        code: `module.exports = async function () {
          const headers = { "content-type": "text/plain", "x-small": "kept" };
          for (let i = 0; i < 15; i++) headers["x-pad-" + i] = "b".repeat(100 * 1024);
          return { body: "a".repeat(4 * 1024 * 1024 - 1024), headers };
        };`,
      },
    });
    const res = await fetch(`${svc.url}/proxy/100`, { headers: { "svc-proxy-key": key } });
    const body = Buffer.from(await res.arrayBuffer());
    const headers = Object.fromEntries(res.headers.entries());

    expect(res.status).toBe(200);
    expect(body.length).toBe(4 * 1024 * 1024 - 1024);
    expect(headers["x-small"]).toBe("kept");
    // What the function's result would hold: the body as base64, and the headers.
    const result = JSON.stringify({ statusCode: 200, headers, body: body.toString("base64") });
    expect(Buffer.byteLength(result)).toBeLessThanOrEqual(LAMBDA_RESULT_BYTES);
  }, 60_000);
});
