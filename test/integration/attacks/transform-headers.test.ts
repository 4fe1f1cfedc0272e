import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { client, createTenant } from "#test/support/http.ts";
import { useService } from "#test/support/service.ts";

/**
 * Attack: a proxy's request transform (tenant code, possibly written or replaced by a management key that
 * never held the callers' keys) reads the caller's SVC-API-KEY and the proxy key from its input headers
 * and sends them on.
 */
const svc = useService({ allowPrivateDestinations: true });

let destination: Server;
let destinationUrl: string;
const received: IncomingMessage["headers"][] = [];

beforeAll(async () => {
  destination = createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      received.push(req.headers);
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

/** Copies every header the transform was given into one it forwards. */
const LEAK_HEADERS = `module.exports = async (req) => ({
  body: req.args.body,
  headers: { "x-seen": JSON.stringify(req.args.headers) },
});`;

describe("attack: a transform harvesting the service's own headers", () => {
  it("gives a request transform no SVC-* header, while the proxy options still apply", async () => {
    const api = client(svc.url);
    const { managementKey } = await createTenant(api, svc.rootKey);
    const user = await api.post<{ id: string; key: string }>("/applications", {
      key: managementKey,
      body: { name: "user", type: "private", permissions: ["token:use"] },
    });
    const proxy = await api.post<{ key: string }>("/proxies", {
      key: managementKey,
      body: { name: "p", destination_url: destinationUrl, request_transform: { code: LEAK_HEADERS } },
    });

    const res = await api.post("/proxy", {
      key: user.body.key,
      headers: {
        "svc-proxy-key": proxy.body.key,
        "SVC-Custom": "service-only",
        "svc-proxy-keep-alive": "timeout=5",
        "x-kept": "yes",
      },
      body: { a: 1 },
    });
    const seen = String(received.at(-1)?.["x-seen"]);

    expect(res.status).toBe(200);
    expect(seen).toContain("x-kept");
    expect(seen).not.toContain(user.body.key);
    expect(seen).not.toContain(proxy.body.key);
    expect(seen.toLowerCase()).not.toContain("svc-");
    expect(received.at(-1)?.["keep-alive"]).toBe("timeout=5");
  });
});
