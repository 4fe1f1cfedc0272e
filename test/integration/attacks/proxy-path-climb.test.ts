/**
 * Attack: a proxy caller climbs above destination_url's path (`http://destination/api/v1`) with a path
 * suffix in a disguise the suffix check did not see through, for a destination (or a server behind it) that
 * decodes more than once or leniently: `%25` nested five times and more (the check decoded four rounds),
 * overlong UTF-8 (`%c0%ae`), IIS's `%u002e`, fullwidth dots (`%ef%bc%8e`), and ".." followed by what some
 * servers cut a name at (NUL, space, an encoded "?" or "#"). Each must be refused with a 400 before anything
 * is sent; the destination records every path it receives.
 */
import { createServer, request, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openProxy } from "#test/support/proxies.ts";
import { useService } from "#test/support/service.ts";

const svc = useService({ allowPrivateDestinations: true });

let destination: Server;
let destinationUrl: string;
/** Request targets the destination received, as sent. */
const received: string[] = [];

beforeAll(async () => {
  destination = createServer((req, res) => {
    received.push(req.url ?? "");
    req.resume();
    res.writeHead(200, { "content-type": "application/json" }).end('{"ok":true}');
  });
  await new Promise<void>((resolve) => destination.listen(0, "127.0.0.1", resolve));
  destinationUrl = `http://127.0.0.1:${(destination.address() as AddressInfo).port}/api/v1`;
});

afterAll(() => {
  destination.close();
});

/** GET /proxy<suffix> with the path sent byte for byte (fetch would normalize it first). */
function proxyGet(key: string, suffix: string): Promise<{ status: number; body: string }> {
  const target = new URL(svc.url);
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: target.hostname,
        port: target.port,
        method: "GET",
        path: `/proxy${suffix}`,
        headers: { "svc-proxy-key": key },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (chunk: Buffer) => chunks.push(chunk));
        res.on("end", () =>
          resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString("utf8") }),
        );
      },
    );
    req.on("error", reject);
    req.end();
  });
}

describe("attack: climbing above destination_url's path with a disguised suffix", () => {
  it.each([
    ["'%25' nested five times", "/%2525252525252e%2525252525252e%2525252525252fadmin"],
    ["'%25' nested six times", "/%252525252525252e%252525252525252e/admin"],
    ["overlong UTF-8 dots", "/%c0%ae%c0%ae/admin"],
    ["overlong UTF-8 dots and slash, upper case", "/x%C0%AF%C0%AE%C0%AE%C0%AFadmin"],
    ["three-byte overlong dots", "/%e0%80%ae%e0%80%ae/admin"],
    ["IIS %u dots", "/%u002e%u002e/admin"],
    ["fullwidth dots", "/%ef%bc%8e%ef%bc%8e/admin"],
    ["a two-dot leader", "/%e2%80%a5/admin"],
    ["'..' cut at NUL", "/..%00/admin"],
    ["'..' with a trailing space", "/..%20/admin"],
    ["'..' cut at an encoded '?'", "/..%3f/admin"],
    ["'..' cut at an encoded '#'", "/..%23/admin"],
    ["double-encoded dots and slash", "/%252e%252e%252fadmin"],
    ["an encoded slash after '..'", "/..%2fadmin"],
  ])("%s: 400 before anything is sent", async (_, suffix) => {
    const key = await openProxy(svc.url, svc.rootKey, destinationUrl);
    const before = received.length;

    const res = await proxyGet(key, suffix);

    expect(res.status, res.body).toBe(400);
    expect(JSON.parse(res.body)).toMatchObject({ proxy_error: { status: 400 } });
    expect(received.slice(before)).toEqual([]);
  });

  it("still forwards ordinary suffixes byte for byte", async () => {
    const key = await openProxy(svc.url, svc.rootKey, destinationUrl);
    const before = received.length;

    const res = await proxyGet(key, "/charges/a%2Fb/.well-known/a..b/%2525");

    expect(res.status, res.body).toBe(200);
    expect(received.slice(before)).toEqual(["/api/v1/charges/a%2Fb/.well-known/a..b/%2525"]);
  });
});
