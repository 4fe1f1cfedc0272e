import dns from "node:dns";
import http from "node:http";
import type { AddressInfo } from "node:net";
import net from "node:net";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { forward } from "#shared/egress/forward.ts";
import { IDLE_CONNECTION_MS } from "#shared/egress/pools.ts";
import { EgressError, type EgressOptions, type OutboundRequest } from "#shared/ports/egress.ts";

/*
 * Real HTTP servers on 127.0.0.1 only. Two safety nets keep every other address out of reach even if the
 * code under test regressed: DNS is answered from a fixed table (no resolver traffic), and every socket
 * connect is vetted at the last step: an IP literal or a looked-up address other than 127.0.0.1 is recorded
 * in `escapes` and turned into a lookup failure before the socket exists on the wire. Every test ends by
 * asserting that nothing escaped.
 */

type LookupCallback = (error: NodeJS.ErrnoException | null, address?: unknown, family?: number) => void;
type Lookup = (hostname: string, options: dns.LookupOptions, callback: LookupCallback) => void;

const FAKE_DNS: Record<string, dns.LookupAddress[]> = {
  localhost: [{ address: "127.0.0.1", family: 4 }],
  "rebind.example": [{ address: "127.0.0.1", family: 4 }],
  "metadata.example": [{ address: "169.254.169.254", family: 4 }],
  "intranet.example": [{ address: "10.0.0.1", family: 4 }],
};

/** Hosts sockets were asked to connect to (names or IP literals), in order. */
let connectTargets: string[];
/** Names resolved through dns.lookup (IP literals left out). */
let lookups: string[];
/** Addresses a socket would have reached outside 127.0.0.1: must stay empty. */
let escapes: string[];

beforeEach(() => {
  connectTargets = [];
  lookups = [];
  escapes = [];
  vi.spyOn(dns, "lookup").mockImplementation(fakeLookup as unknown as typeof dns.lookup);
  const realConnect = net.Socket.prototype.connect as (...args: unknown[]) => net.Socket;
  vi.spyOn(net.Socket.prototype, "connect").mockImplementation(function (
    this: net.Socket,
    ...args: unknown[]
  ) {
    const options = (Array.isArray(args[0]) ? args[0][0] : args[0]) as net.TcpSocketConnectOpts;
    const host = String(options.host ?? "");
    connectTargets.push(host);
    if (net.isIP(host) !== 0 && host !== "127.0.0.1") {
      escapes.push(host);
      options.host = "refused-by-test";
      options.lookup = refusingLookup as unknown as net.LookupFunction;
    } else if (net.isIP(host) === 0) {
      const lookup = (options.lookup as Lookup | undefined) ?? (dns.lookup as unknown as Lookup);
      options.lookup = loopbackOnly(lookup) as unknown as net.LookupFunction;
    }
    return realConnect.apply(this, args);
  } as typeof net.Socket.prototype.connect);
});

afterEach(() => {
  vi.restoreAllMocks();
  expect(escapes).toEqual([]);
});

function fakeLookup(hostname: string, options: unknown, callback?: unknown) {
  const done = (typeof options === "function" ? options : callback) as LookupCallback;
  const all = typeof options === "object" && options !== null && (options as dns.LookupOptions).all === true;
  const family = net.isIP(hostname);
  if (!family) lookups.push(hostname);
  const entries = family ? [{ address: hostname, family }] : FAKE_DNS[hostname];
  process.nextTick(() => {
    const first = entries?.[0];
    if (!entries || !first) {
      done(Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: "ENOTFOUND", hostname }));
    } else if (all) {
      done(null, entries);
    } else {
      done(null, first.address, first.family);
    }
  });
}

function refusingLookup(hostname: string, _options: dns.LookupOptions, callback: LookupCallback) {
  process.nextTick(() => callback(new Error(`test refused to connect (${hostname})`)));
}

/** Wraps the lookup a socket will use (request-filtering-agent's, when present) and vets what it returns. */
function loopbackOnly(lookup: Lookup): Lookup {
  return (hostname, options, callback) =>
    lookup(hostname, options, (error, address, family) => {
      if (error) return callback(error, address, family);
      const addresses = Array.isArray(address)
        ? (address as dns.LookupAddress[]).map((entry) => entry.address)
        : [String(address)];
      const outside = addresses.filter((entry) => entry !== "127.0.0.1");
      if (outside.length > 0) {
        escapes.push(...outside);
        return callback(new Error(`test refused to connect to ${outside.join(", ")}`));
      }
      callback(null, address, family);
    });
}

interface Received {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  rawHeaders: string[];
  body: Buffer;
}

interface TestServer {
  base: string;
  port: number;
  connections: () => number;
  received: Received[];
  close: () => Promise<void>;
}

const servers: TestServer[] = [];

afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => server.close()));
});

/** A loopback server; `respond` answers (or not), the default echoes the request as JSON. */
async function startServer(
  respond: (req: Received, res: http.ServerResponse) => void = echo,
): Promise<TestServer> {
  const received: Received[] = [];
  let connections = 0;
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      const entry = {
        method: req.method ?? "",
        url: req.url ?? "",
        headers: req.headers,
        rawHeaders: req.rawHeaders,
        body: Buffer.concat(chunks),
      };
      received.push(entry);
      respond(entry, res);
    });
  });
  server.on("connection", () => {
    connections += 1;
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  const handle: TestServer = {
    base: `http://127.0.0.1:${port}`,
    port,
    connections: () => connections,
    received,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
  servers.push(handle);
  return handle;
}

function echo(req: Received, res: http.ServerResponse) {
  res.setHeader("content-type", "application/json");
  res.end(JSON.stringify({ method: req.method, url: req.url, headers: req.headers }));
}

const local: EgressOptions = { allowPrivate: true, requireHttps: false };
const strict: EgressOptions = { allowPrivate: false, requireHttps: false };

function outbound(destinationUrl: string, overrides: Partial<OutboundRequest> = {}): OutboundRequest {
  return {
    tenantId: "tenant-a",
    destinationUrl,
    pathSuffix: "",
    rawQuery: "",
    method: "GET",
    headers: {},
    ...overrides,
  };
}

async function forwardError(promise: Promise<unknown>): Promise<EgressError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(EgressError);
  return error as EgressError;
}

async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

describe("forward: where the request goes", () => {
  it.each([
    ["suffix and query", "/api", "/v1/charges", "a=1&b=2", "/api/v1/charges?a=1&b=2"],
    ["destination trailing slash removed", "/api/", "/x/y", "", "/api/x/y"],
    ["trailing slash removed with no suffix", "/api/", "", "", "/api"],
    ["bare origin", "", "", "", "/"],
    ["bare origin with suffix", "/", "/x", "q=1", "/x?q=1"],
    ["query merged into an existing one", "/api/?fixed=1", "", "q=2", "/api?fixed=1&q=2"],
    ["existing query kept alone", "/api?fixed=1", "/x", "", "/api/x?fixed=1"],
    ["empty existing query", "/api?", "/x", "q=2", "/api/x?q=2"],
    ["suffix without a leading slash", "/api", "x", "", "/api/x"],
    ["dots inside names are not segments", "/api", "/.well-known/a..b/...", "", "/api/.well-known/a..b/..."],
  ])("%s", async (_, destinationPath, pathSuffix, rawQuery, expected) => {
    const server = await startServer();

    const res = await forward(outbound(`${server.base}${destinationPath}`, { pathSuffix, rawQuery }), local);

    expect(res.status).toBe(200);
    expect(server.received[0]?.url).toBe(expected);
  });

  it("passes path and query bytes through, encoding only what cannot travel raw", async () => {
    const server = await startServer();
    const request = outbound(`${server.base}/api#frag`, {
      pathSuffix: "/a%2Fb/c d/\u00e9/%zz",
      rawQuery: "x=%20&y=a b#c&z=[1]&w=\u00e9",
    });

    await forward(request, local);

    expect(server.received[0]?.url).toBe("/api/a%2Fb/c%20d/%C3%A9/%zz?x=%20&y=a%20b%23c&z=[1]&w=%C3%A9");
  });

  it.each([
    "/../admin",
    "/a/..",
    "/a/../../b",
    "/./x",
    "/%2e%2e/admin",
    "/%2E./admin",
    "/%252e%252e/admin",
    "/a/..%2fb",
    "/a/%2e%2e%5cb",
    "/a\\..\\b",
    "/..;jsessionid=1/admin",
    "/lone-surrogate-\ud800",
  ])("refuses the path suffix %j before connecting", async (pathSuffix) => {
    const server = await startServer();

    const error = await forwardError(forward(outbound(`${server.base}/api`, { pathSuffix }), local));

    expect(error).toMatchObject({ status: 400, code: "invalid_destination" });
    expect(server.connections()).toBe(0);
  });

  it("does not follow redirects: the 3xx goes back to the caller", async () => {
    const server = await startServer((_, res) => {
      res.writeHead(302, { location: "http://169.254.169.254/latest/meta-data/" }).end();
    });

    const res = await forward(outbound(server.base), local);

    expect(res.status).toBe(302);
    expect(res.headers.location).toBe("http://169.254.169.254/latest/meta-data/");
    expect(server.received).toHaveLength(1);
    expect(connectTargets).toEqual(["127.0.0.1"]);
  });
});

describe("forward: what is sent", () => {
  it.each(["POST", "PUT", "PATCH", "DELETE"])(
    "forwards %s with its body and a recomputed length",
    async (method) => {
      const server = await startServer();
      const body = Buffer.from('{"card":"4242424242424242"}');

      await forward(
        outbound(server.base, {
          method,
          body,
          headers: {
            "content-type": "application/json",
            "content-length": "999",
            "transfer-encoding": "chunked",
          },
        }),
        local,
      );

      const got = server.received[0];
      expect(got?.method).toBe(method);
      expect(got?.body.equals(body)).toBe(true);
      expect(got?.headers["content-length"]).toBe(String(body.length));
      expect(got?.headers["transfer-encoding"]).toBeUndefined();
    },
  );

  it("sends no body on GET and an empty one on a bodiless POST", async () => {
    const server = await startServer();

    await forward(outbound(server.base, { method: "get", headers: { "content-length": "10" } }), local);
    await forward(outbound(server.base, { method: "POST" }), local);

    const [get, post] = server.received;
    expect(get?.method).toBe("GET");
    expect(get?.headers["content-length"]).toBeUndefined();
    expect(get?.headers["transfer-encoding"]).toBeUndefined();
    expect(post?.headers["content-length"]).toBe("0");
    expect(post?.body.length).toBe(0);
  });

  it("forwards Authorization and destination headers, never svc-* or hop-by-hop ones", async () => {
    const server = await startServer();

    await forward(
      outbound(server.base, {
        method: "POST",
        body: Buffer.from("x"),
        headers: {
          authorization: "Bearer sk_live_destination",
          "x-custom": "kept",
          "svc-api-key": "key_pvt_secret",
          "svc-proxy-key": "key_prx_secret",
          "svc-idempotency-key": "idem",
          host: "evil.example",
          connection: "upgrade, x-hop",
          "x-hop": "dropped",
          upgrade: "websocket",
          "keep-alive": "timeout=1",
          "proxy-connection": "keep-alive",
          "proxy-authorization": "Basic cHJveHk=",
          "proxy-authenticate": "Basic",
          te: "trailers",
          trailer: "x-checksum",
        },
      }),
      local,
    );

    const got = server.received[0];
    expect(got?.headers.authorization).toBe("Bearer sk_live_destination");
    expect(got?.headers["x-custom"]).toBe("kept");
    expect(got?.headers.host).toBe(`127.0.0.1:${server.port}`);
    expect(
      got?.rawHeaders.filter((_, i) => i % 2 === 0 && got.rawHeaders[i]?.toLowerCase() === "host"),
    ).toHaveLength(1);
    const names = Object.keys(got?.headers ?? {});
    expect(names.filter((name) => name.startsWith("svc-"))).toEqual([]);
    for (const name of [
      "x-hop",
      "upgrade",
      "keep-alive",
      "proxy-connection",
      "proxy-authorization",
      "te",
      "trailer",
    ])
      expect(names).not.toContain(name);
    // The caller's Connection ("upgrade, x-hop") is not forwarded: this is the pooled agent's own.
    expect(got?.headers.connection).toBe("keep-alive");
  });

  it("injects SVC-PROXY-KEEP-ALIVE and SVC-PROXY-CONNECTION as Keep-Alive and Connection", async () => {
    const server = await startServer();

    await forward(
      outbound(server.base, {
        headers: { "svc-proxy-connection": "keep-alive", "svc-proxy-keep-alive": "timeout=5, max=100" },
      }),
      local,
    );
    await forward(
      outbound(server.base, {
        headers: { "svc-proxy-connection": "keep-alive, x-evil", "svc-proxy-keep-alive": 'timeout="5"' },
      }),
      local,
    );

    const [valid, invalid] = server.received;
    expect(valid?.headers.connection).toBe("keep-alive");
    expect(valid?.headers["keep-alive"]).toBe("timeout=5, max=100");
    // Not injected: the pooled agent's own Connection, no Keep-Alive.
    expect(invalid?.headers.connection).toBe("keep-alive");
    expect(invalid?.headers["keep-alive"]).toBeUndefined();
  });
});

describe("forward: connections", () => {
  it("reuses a connection for the same tenant's next call", async () => {
    const server = await startServer();

    await forward(outbound(server.base, { tenantId: "tenant-reuse" }), local);
    await forward(outbound(server.base, { tenantId: "tenant-reuse" }), local);

    expect(server.received).toHaveLength(2);
    expect(server.connections()).toBe(1);
  });

  it("never shares a connection between tenants", async () => {
    const server = await startServer();

    await forward(outbound(server.base, { tenantId: "tenant-one" }), local);
    await forward(outbound(server.base, { tenantId: "tenant-two" }), local);
    await forward(outbound(server.base, { tenantId: "tenant-one" }), local);

    expect(server.received).toHaveLength(3);
    expect(server.connections()).toBe(2);
  });

  it("does not reuse connections of a pool idle for longer than the idle limit (a thawed Lambda)", async () => {
    const server = await startServer();
    const realNow = performance.now.bind(performance);
    let skew = 0;
    // A frozen process runs no timers: the sockets' idle timeouts have not fired, only the clock moved.
    const now = vi.spyOn(performance, "now").mockImplementation(() => realNow() + skew);

    try {
      await forward(outbound(server.base, { tenantId: "tenant-thawed" }), local);
      skew = IDLE_CONNECTION_MS + 1_000;
      await forward(outbound(server.base, { tenantId: "tenant-thawed" }), local);
    } finally {
      now.mockRestore();
    }

    expect(server.received).toHaveLength(2);
    expect(server.connections()).toBe(2);
  });

  it("closes the connection after the call when the caller injects Connection: close", async () => {
    const server = await startServer();

    await forward(
      outbound(server.base, { tenantId: "tenant-close", headers: { "svc-proxy-connection": "close" } }),
      local,
    );
    await forward(outbound(server.base, { tenantId: "tenant-close" }), local);

    expect(server.received[0]?.headers.connection).toBe("close");
    expect(server.connections()).toBe(2);
  });
});

describe("forward: what comes back", () => {
  it("round-trips every byte value both ways", async () => {
    const bytes = Buffer.from(Array.from({ length: 1024 }, (_, i) => i % 256));
    const server = await startServer((req, res) => {
      res.writeHead(200, { "content-type": "application/octet-stream" });
      res.end(Buffer.from(req.body).reverse());
    });

    const res = await forward(
      outbound(server.base, {
        method: "POST",
        body: bytes,
        headers: { "content-type": "application/octet-stream" },
      }),
      local,
    );

    expect(server.received[0]?.body.equals(bytes)).toBe(true);
    expect(res.body.equals(Buffer.from(bytes).reverse())).toBe(true);
    expect(res.headers["content-type"]).toBe("application/octet-stream");
  });

  it("returns the destination's status, body and end-to-end headers, without hop-by-hop, set-cookie or svc-* ones", async () => {
    const server = await startServer((_, res) => {
      res.writeHead(418, {
        "content-type": "text/plain",
        "x-custom": "teapot",
        "set-cookie": ["a=1", "b=2"],
        "svc-proxy-destination-status": "200",
        connection: "close",
        "keep-alive": "timeout=5",
      });
      res.write("I'm a ");
      res.end("teapot");
    });

    const res = await forward(outbound(server.base), local);

    expect(res.status).toBe(418);
    expect(res.body.toString()).toBe("I'm a teapot");
    expect(res.headers).toMatchObject({ "content-type": "text/plain", "x-custom": "teapot" });
    for (const name of [
      "set-cookie",
      "connection",
      "keep-alive",
      "transfer-encoding",
      "content-length",
      "svc-proxy-destination-status",
    ])
      expect(res.headers).not.toHaveProperty(name);
  });

  it("returns destination errors as responses, not failures", async () => {
    const server = await startServer((_, res) => {
      res.writeHead(503, { "content-type": "application/json", "content-length": "2" }).end("{}");
    });

    const res = await forward(outbound(server.base), local);

    expect(res).toMatchObject({ status: 503, body: Buffer.from("{}") });
    expect(res.headers).not.toHaveProperty("content-length");
  });
});

describe("forward: failures", () => {
  it("answers 504 timeout when the destination never answers", async () => {
    const server = await startServer(() => {
      // never respond
    });
    const error = await forwardError(forward(outbound(server.base), { ...local, timeoutMs: 200 }));

    expect(error).toMatchObject({ status: 504, code: "timeout" });
  });

  it("answers 504 timeout when the body stalls after the headers", async () => {
    const server = await startServer((_, res) => {
      res.writeHead(200, { "content-type": "text/plain" });
      res.write("partial");
    });

    const error = await forwardError(forward(outbound(server.base), { ...local, timeoutMs: 200 }));

    expect(error).toMatchObject({ status: 504, code: "timeout" });
  });

  it("answers 502 unreachable when nothing listens on the port", async () => {
    const port = await freePort();

    const error = await forwardError(forward(outbound(`http://127.0.0.1:${port}/`), local));

    expect(error).toMatchObject({ status: 502, code: "unreachable" });
  });

  it("answers 502 unreachable when the name does not resolve", async () => {
    const error = await forwardError(forward(outbound("http://no-such-host.example/"), local));

    expect(error).toMatchObject({ status: 502, code: "unreachable" });
    expect(lookups).toEqual(["no-such-host.example"]);
  });

  it("answers 502 unreachable when the connection drops mid-body", async () => {
    const server = await startServer((_, res) => {
      res.writeHead(200, { "content-length": "100" });
      res.write("short");
      setTimeout(() => res.socket?.destroy(), 20);
    });

    const error = await forwardError(forward(outbound(server.base), local));

    expect(error).toMatchObject({ status: 502, code: "unreachable" });
  });

  it("answers 502 response_too_large for a declared or streamed body above the limit", async () => {
    const declared = await startServer((_, res) => {
      res.writeHead(200, { "content-length": "2048" }).end(Buffer.alloc(2048));
    });
    const streamed = await startServer((_, res) => {
      res.write(Buffer.alloc(700));
      res.end(Buffer.alloc(700));
    });
    const exact = await startServer((_, res) => {
      res.end(Buffer.alloc(1024, 7));
    });
    const options = { ...local, maxResponseBytes: 1024 };

    const declaredError = await forwardError(forward(outbound(declared.base), options));
    const streamedError = await forwardError(forward(outbound(streamed.base), options));
    const atLimit = await forward(outbound(exact.base), options);

    expect(declaredError).toMatchObject({ status: 502, code: "response_too_large" });
    expect(streamedError).toMatchObject({ status: 502, code: "response_too_large" });
    expect(atLimit.body.equals(Buffer.alloc(1024, 7))).toBe(true);
  });

  it("throws a TypeError for a method the proxy does not route", async () => {
    await expect(forward(outbound("http://127.0.0.1:1/", { method: "TRACE" }), local)).rejects.toThrow(
      TypeError,
    );
    expect(connectTargets).toEqual([]);
  });
});

describe("forward: SSRF guard (allowPrivate false)", () => {
  it.each([
    ["127.0.0.1", (port: number) => `http://127.0.0.1:${port}/`],
    ["localhost", (port: number) => `http://localhost:${port}/`],
    ["a name that resolves to 127.0.0.1", (port: number) => `http://rebind.example:${port}/`],
    ["[::1]", (port: number) => `http://[::1]:${port}/`],
    ["IPv4-mapped [::ffff:127.0.0.1]", (port: number) => `http://[::ffff:127.0.0.1]:${port}/`],
    ["127.0.0.1 as a decimal number", (port: number) => `http://2130706433:${port}/`],
    ["0.0.0.0", (port: number) => `http://0.0.0.0:${port}/`],
    ["https to 127.0.0.1", (port: number) => `https://127.0.0.1:${port}/`],
    ["https to localhost", (port: number) => `https://localhost:${port}/`],
    ["the metadata address 169.254.169.254", () => "http://169.254.169.254/latest/meta-data/"],
    ["a name that resolves to 169.254.169.254", () => "http://metadata.example/latest/meta-data/"],
    ["10.0.0.1", () => "http://10.0.0.1/"],
    ["a name that resolves to 10.0.0.1", () => "http://intranet.example/"],
    ["192.168.1.1", () => "http://192.168.1.1/"],
    ["[fd00::1]", () => "http://[fd00::1]/"],
    ["[fe80::1]", () => "http://[fe80::1]/"],
  ])("refuses %s with 403 before any packet is sent", async (_, destination) => {
    const server = await startServer();

    const error = await forwardError(forward(outbound(destination(server.port)), strict));

    expect(error).toMatchObject({ status: 403, code: "forbidden_destination" });
    expect(error.message).not.toMatch(/\d+\.\d+\.\d+\.\d+|::/);
    expect(server.connections()).toBe(0);
    // IP literals are refused before a socket is even asked to connect; names right after their lookup.
    for (const host of connectTargets) expect(net.isIP(host)).toBe(0);
  });

  it("refuses plain http when https is required, before any lookup", async () => {
    const error = await forwardError(
      forward(outbound("http://api.example.com/charge"), { allowPrivate: false, requireHttps: true }),
    );

    expect(error).toMatchObject({ status: 403, code: "forbidden_destination" });
    expect(lookups).toEqual([]);
    expect(connectTargets).toEqual([]);
  });

  it("also requires https when private addresses are allowed and https is required", async () => {
    const server = await startServer();

    const error = await forwardError(
      forward(outbound(server.base), { allowPrivate: true, requireHttps: true }),
    );

    expect(error).toMatchObject({ status: 403, code: "forbidden_destination" });
    expect(server.connections()).toBe(0);
  });

  it("reaches 127.0.0.1 when private addresses are allowed (local mode)", async () => {
    const server = await startServer();

    const res = await forward(outbound(`http://localhost:${server.port}/ok`), local);

    expect(res.status).toBe(200);
    expect(server.received[0]?.headers.host).toBe(`localhost:${server.port}`);
  });
});

describe("forward: destinations refused as invalid (400)", () => {
  it.each([
    ["credentials", (base: string) => base.replace("http://", "http://user:pass@")],
    ["a user name alone", (base: string) => base.replace("http://", "http://user@")],
    ["ftp", () => "ftp://127.0.0.1/file"],
    ["file", () => "file:///etc/passwd"],
    ["javascript", () => "javascript:alert(1)"],
    ["data", () => "data:text/plain,hi"],
    ["a relative URL", () => "/relative/path"],
    ["garbage", () => "not a url"],
  ])("refuses %s", async (_, destination) => {
    const server = await startServer();

    const error = await forwardError(forward(outbound(destination(server.base)), local));

    expect(error).toMatchObject({ status: 400, code: "invalid_destination" });
    expect(server.connections()).toBe(0);
    expect(lookups).toEqual([]);
  });

  it("never calls itself: its own host:port, a loopback alias on its port, or a name resolving there", async () => {
    const server = await startServer();
    const options = { ...local, selfHosts: [`127.0.0.1:${server.port}`] };

    const direct = await forwardError(forward(outbound(server.base), options));
    const alias = await forwardError(forward(outbound(`http://localhost:${server.port}/`), options));
    const v6 = await forwardError(forward(outbound(`http://[::1]:${server.port}/`), options));
    const resolved = await forwardError(forward(outbound(`http://rebind.example:${server.port}/`), options));

    for (const error of [direct, alias, v6, resolved])
      expect(error).toMatchObject({ status: 400, code: "invalid_destination" });
    expect(server.connections()).toBe(0);
  });

  it("matches self hosts by name, case and trailing dot aside, on any port when the entry has none", async () => {
    const options = { ...strict, selfHosts: ["Vault.Example.com", "api.example.com:8443"] };

    const sameName = await forwardError(forward(outbound("https://vault.example.com./x"), options));
    const otherPort = await forwardError(forward(outbound("https://vault.example.com:9000/"), options));
    const samePort = await forwardError(forward(outbound("https://API.example.com:8443/"), options));

    for (const error of [sameName, otherPort, samePort])
      expect(error).toMatchObject({ status: 400, code: "invalid_destination" });
    expect(lookups).toEqual([]);
  });

  it("ignores malformed selfHosts entries (they come from a caller's Host header)", async () => {
    const server = await startServer();
    const selfHosts = ["a b", "x:y:z", "", "[::1", `127.0.0.1:${server.port}:1`];

    const res = await forward(outbound(server.base), { ...local, selfHosts });

    expect(res.status).toBe(200);
  });

  it("still reaches another loopback port in local mode", async () => {
    const server = await startServer();
    const otherPort = server.port === 65535 ? 65534 : server.port + 1;

    const res = await forward(outbound(server.base), { ...local, selfHosts: [`127.0.0.1:${otherPort}`] });

    expect(res.status).toBe(200);
  });
});
