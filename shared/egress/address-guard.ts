/**
 * The connect-time address rule of every outbound connection the service makes for a tenant (proxy
 * destinations, reactor callbacks / webhook deliveries, tenant code's fetch: all go through exchange.ts).
 *
 * Whatever SVC_PROXY_ALLOW_PRIVATE says, a connection is refused when the address it is about to reach:
 * - is link-local or a cloud metadata/host service (169.254.0.0/16 with 169.254.169.254 and ECS's
 *   169.254.170.2, fe80::/10, fd00:ec2::/32 with fd00:ec2::254, 100.100.100.200, 168.63.129.16,
 *   192.0.0.192) or "this network" (0.0.0.0/8, ::, which reach this machine), also written as
 *   an IPv4-mapped, IPv4-compatible or NAT64 IPv6 address; or
 * - is one of this service's internal endpoints (DynamoDB Local, the local API itself, AWS endpoints set by
 *   AWS_ENDPOINT_URL*: protectEndpoint): its port on any address of this machine, or on its own host and the
 *   addresses that host resolves to.
 * Without SVC_PROXY_ALLOW_PRIVATE, request-filtering-agent refuses every non-unicast address on top
 * (private, loopback, unspecified, reserved...).
 *
 * The check runs where the socket is made (Agent#createConnection): IP literals before any socket exists,
 * names on every address their lookup returns (one refused address refuses the name, so a DNS answer
 * mixing a public and an internal address cannot pick its way through), at each new connection, so a name
 * that re-binds between a check and the connect gains nothing. forward() never follows a redirect (it
 * hands 3xx answers back as they are); tenant code's fetch checks each hop again (shared/sandbox/).
 */
import dns from "node:dns";
import type { Agent as HttpAgent } from "node:http";
import type { LookupFunction, TcpNetConnectOpts } from "node:net";
import net from "node:net";
import os from "node:os";
import type { Duplex } from "node:stream";
import { RequestFilteringHttpAgent, RequestFilteringHttpsAgent } from "request-filtering-agent";

/** Link-local and metadata/host-service addresses: never reachable from a tenant's request. */
const ALWAYS_REFUSED = new net.BlockList();
ALWAYS_REFUSED.addSubnet("169.254.0.0", 16, "ipv4"); // link-local: AWS/GCP/Azure/OpenStack metadata, ECS credentials
ALWAYS_REFUSED.addSubnet("fe80::", 10, "ipv6"); // IPv6 link-local
ALWAYS_REFUSED.addSubnet("fd00:ec2::", 32, "ipv6"); // AWS instance services over IPv6 (metadata fd00:ec2::254)
ALWAYS_REFUSED.addAddress("100.100.100.200", "ipv4"); // Alibaba Cloud metadata
ALWAYS_REFUSED.addAddress("168.63.129.16", "ipv4"); // Azure WireServer
ALWAYS_REFUSED.addAddress("192.0.0.192", "ipv4"); // Oracle Cloud metadata
ALWAYS_REFUSED.addSubnet("0.0.0.0", 8, "ipv4"); // "this network": 0.0.0.0 connects to this machine
ALWAYS_REFUSED.addAddress("::", "ipv6");

/** Private and loopback ranges: where an internal endpoint whose name has not resolved yet may be. */
const NOT_PUBLIC = new net.BlockList();
NOT_PUBLIC.addSubnet("10.0.0.0", 8, "ipv4");
NOT_PUBLIC.addSubnet("172.16.0.0", 12, "ipv4");
NOT_PUBLIC.addSubnet("192.168.0.0", 16, "ipv4");
NOT_PUBLIC.addSubnet("100.64.0.0", 10, "ipv4");
NOT_PUBLIC.addSubnet("127.0.0.0", 8, "ipv4");
NOT_PUBLIC.addSubnet("fc00::", 7, "ipv6");
NOT_PUBLIC.addAddress("::1", "ipv6");

/** A connection refused by this rule. Its message names no address (callers may see the classification). */
export class AddressRefusedError extends Error {
  constructor() {
    super("The destination address is refused.");
    this.name = "AddressRefusedError";
  }
}

interface Endpoint {
  hostname: string;
  port: number;
  local: boolean;
  /**
   * The addresses an endpoint given by name (`http://dynamodb:8000`, a container) resolves to, refused on its port
   * as the name is: protected by its name alone, it was reached through its address or any other name for it
   * (proxies review, 28 Nov 2026). One of them local makes the endpoint local. Kept once seen (the safe side).
   */
  addresses: Set<string>;
  /**
   * A name not resolved yet (the first lookup on its way, or failed: a container not up yet): every private or
   * loopback address on its port is refused meanwhile (the safe side), and the name is asked again every RETRY_MS until it answers. It was
   * allowed until the next minute's lookup (review r2b).
   */
  unresolved: boolean;
}

/** How soon a protected endpoint's name is asked again while it has never answered. */
const RETRY_MS = 1_000;

/** How often a protected endpoint's name is resolved again (a container restarted on another address). */
const RESOLVE_EVERY_MS = 60_000;

/** host:port → endpoint; a Map so that protecting the same endpoint twice is one entry. */
const internalEndpoints = new Map<string, Endpoint>();

/**
 * Never let a tenant's request reach `endpoint` (a URL such as DynamoDB's endpoint or the local API's URL),
 * allowPrivate or not. A loopback/local host stands for every address of this machine on that port.
 * Returns a function that lifts the protection (the local server, when it stops).
 */
export function protectEndpoint(endpoint: string): () => void {
  let url: URL;
  try {
    url = new URL(endpoint);
  } catch {
    return () => {};
  }
  const hostname = bare(url.hostname);
  const port = url.port ? Number(url.port) : url.protocol === "https:" ? 443 : 80;
  const key = `${hostname}|${port}`;
  if (internalEndpoints.has(key)) return () => {};
  const byName = !isLocalName(hostname) && net.isIP(hostname) === 0;
  const entry: Endpoint = {
    hostname,
    port,
    local: isLocalName(hostname),
    addresses: new Set(),
    unresolved: byName,
  };
  internalEndpoints.set(key, entry);
  let again: NodeJS.Timeout | undefined;
  let retry: NodeJS.Timeout | undefined;
  let lifted = false;
  if (byName) {
    const resolve = () =>
      systemLookup(hostname, { all: true }, (error, found) => {
        if (lifted) return;
        if (error || !Array.isArray(found) || found.length === 0) {
          // One retry pending at a time: the minute's lookup failing too started a second chain of retries, and
          // a name that never resolves was asked once more a second for every minute it had waited (review r3b).
          if (entry.unresolved && retry === undefined)
            retry = setTimeout(() => {
              retry = undefined;
              resolve();
            }, RETRY_MS).unref();
          return;
        }
        for (const { address } of found) {
          entry.addresses.add(bare(address));
          if (isLocalAddress(address)) entry.local = true;
        }
        entry.unresolved = false;
      });
    resolve();
    again = setInterval(resolve, RESOLVE_EVERY_MS).unref();
  }
  return () => {
    lifted = true;
    internalEndpoints.delete(key);
    clearInterval(again);
    clearTimeout(retry);
  };
}

/** Why connecting to `address`:`port` (reached through the name `hostname`) is refused, or undefined. */
export function refusal(address: string, port: number, hostname?: string): string | undefined {
  const lowered = bare(address);
  const family = net.isIP(lowered);
  if (family === 0) return undefined;
  const v4 = family === 4 ? lowered : embeddedV4(lowered);
  if (ALWAYS_REFUSED.check(lowered, family === 4 ? "ipv4" : "ipv6")) return "link-local or metadata address";
  if (v4 !== undefined && ALWAYS_REFUSED.check(v4, "ipv4")) return "link-local or metadata address";
  const name = hostname === undefined ? undefined : bare(hostname);
  for (const endpoint of internalEndpoints.values()) {
    if (endpoint.port !== port) continue;
    // Its name not resolved yet: every private or loopback address on its port, the safe side (never a public one:
    // a name that never resolves must not close a port to the internet).
    if (
      endpoint.unresolved &&
      (NOT_PUBLIC.check(lowered, family === 4 ? "ipv4" : "ipv6") ||
        (v4 !== undefined && NOT_PUBLIC.check(v4, "ipv4")))
    )
      return "internal endpoint";
    if (endpoint.local && isLocalAddress(lowered)) return "internal endpoint";
    if (endpoint.hostname === lowered || endpoint.hostname === v4 || endpoint.hostname === name)
      return "internal endpoint";
    if (endpoint.addresses.has(lowered) || (v4 !== undefined && endpoint.addresses.has(v4)))
      return "internal endpoint";
  }
  return undefined;
}

/** localhost names, loopback and unspecified addresses, and this machine's own interface addresses. */
export function isLocalName(hostname: string): boolean {
  const name = bare(hostname);
  if (name === "localhost" || name.endsWith(".localhost")) return true;
  return isLocalAddress(name);
}

export function isLocalAddress(address: string): boolean {
  const lowered = bare(address);
  const family = net.isIP(lowered);
  if (family === 0) return false;
  const v4 = family === 4 ? lowered : embeddedV4(lowered);
  if (v4 !== undefined) {
    if (v4.startsWith("127.") || v4.startsWith("0.")) return true;
  } else if (lowered === "::1" || lowered === "::") {
    return true;
  }
  return Object.values(os.networkInterfaces()).some((infos) =>
    (infos ?? []).some((info) => {
      const own = info.address.toLowerCase();
      return own === lowered || (v4 !== undefined && own === v4);
    }),
  );
}

/**
 * The IPv4 address inside an IPv6 one that reaches it: IPv4-mapped (::ffff:a.b.c.d), IPv4-compatible
 * (::a.b.c.d) or NAT64 (64:ff9b::/96), in dotted or hex form.
 */
export function embeddedV4(address: string): string | undefined {
  if (net.isIPv6(address) === false) return undefined;
  const groups = expandV6(address);
  if (groups === undefined) return undefined;
  const zeros = (from: number, to: number) => groups.slice(from, to).every((g) => g === 0);
  const mapped = zeros(0, 5) && groups[5] === 0xffff;
  const compatible = zeros(0, 6) && (groups[6] !== 0 || (groups[7] ?? 0) > 1);
  const nat64 = groups[0] === 0x64 && groups[1] === 0xff9b && zeros(2, 6);
  if (!mapped && !compatible && !nat64) return undefined;
  const high = groups[6] ?? 0;
  const low = groups[7] ?? 0;
  return `${high >> 8}.${high & 0xff}.${low >> 8}.${low & 0xff}`;
}

/** The eight 16-bit groups of an IPv6 address (a trailing dotted IPv4 part included). */
function expandV6(address: string): number[] | undefined {
  let text = address.split("%")[0] ?? "";
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (dotted?.[1]) {
    const parts = dotted[1].split(".").map(Number);
    const [a = 0, b = 0, c = 0, d = 0] = parts;
    text = `${text.slice(0, -dotted[1].length)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head = "", tail] = text.split("::");
  const left = head === "" ? [] : head.split(":");
  const right = tail === undefined || tail === "" ? [] : tail.split(":");
  const fill = tail === undefined ? 0 : 8 - left.length - right.length;
  const groups = [...left, ...Array<string>(Math.max(fill, 0)).fill("0"), ...right].map((g) =>
    Number.parseInt(g, 16),
  );
  return groups.length === 8 && groups.every((g) => Number.isInteger(g)) ? groups : undefined;
}

function bare(hostname: string): string {
  let name = hostname.toLowerCase();
  if (name.startsWith("[") && name.endsWith("]")) name = name.slice(1, -1);
  return name.endsWith(".") ? name.slice(0, -1) : name;
}

/**
 * Wraps `lookup` so that a name is refused, with the error `refuse` gives, when any address it resolves to is
 * refused; otherwise it answers in the shape asked (all addresses, or the first).
 */
export function refusingLookup(
  lookup: LookupFunction,
  refuse: (address: string, hostname: string) => Error | undefined,
): LookupFunction {
  return (hostname, options, callback) => {
    lookup(hostname, { ...options, all: true }, (error, addresses) => {
      if (error) return callback(error, []);
      const list = Array.isArray(addresses) ? addresses : [];
      for (const entry of list) {
        const refused = refuse(entry.address, hostname);
        if (refused) return callback(refused, []);
      }
      if (options.all) return callback(null, list);
      const first = list[0];
      if (!first)
        return callback(
          Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: "ENOTFOUND" }),
          [],
        );
      callback(null, first.address, first.family);
    });
  };
}

/** Wraps `lookup` so that a name is refused when any address it resolves to is. */
function guardedLookup(lookup: LookupFunction, port: number): LookupFunction {
  return refusingLookup(lookup, (address, hostname) =>
    refusal(address, port, hostname) !== undefined ? new AddressRefusedError() : undefined,
  );
}

// dns.lookup read at call time (not bound at import), so there is one resolution path to observe or fake.
const systemLookup: LookupFunction = (hostname, options, callback) => {
  dns.lookup(hostname, options, callback);
};

type ConnectionListener = (error: Error | null, socket: Duplex) => void;

/** The options to connect with, or the refusal: the one place every outbound connection passes. */
function guard(options: TcpNetConnectOpts): TcpNetConnectOpts | AddressRefusedError {
  const port = Number(options.port);
  const host = options.host ?? "localhost";
  if (net.isIP(bare(host)) !== 0 && refusal(host, port) !== undefined) return new AddressRefusedError();
  return { ...options, lookup: guardedLookup(options.lookup ?? systemLookup, port) };
}

function refusedSocket(error: Error, listener?: ConnectionListener): net.Socket {
  const socket = new net.Socket();
  if (listener) listener(error, socket);
  else process.nextTick(() => socket.destroy(error));
  return socket;
}

/** http agent: this module's rule, then request-filtering-agent's (private addresses unless allowed). */
export class GuardedHttpAgent extends RequestFilteringHttpAgent {
  override createConnection(options: TcpNetConnectOpts, listener?: ConnectionListener) {
    const guarded = guard(options);
    if (guarded instanceof Error) return refusedSocket(guarded, listener);
    return super.createConnection(guarded, listener);
  }
}

/** https agent: this module's rule, then request-filtering-agent's (private addresses unless allowed). */
export class GuardedHttpsAgent extends RequestFilteringHttpsAgent {
  override createConnection(options: TcpNetConnectOpts, listener?: ConnectionListener) {
    const guarded = guard(options);
    if (guarded instanceof Error) return refusedSocket(guarded, listener);
    return super.createConnection(guarded, listener);
  }
}

/** Both agents for one pool; `allowPrivate` lifts request-filtering-agent's private-address rule only. */
export function guardedAgents(
  options: ConstructorParameters<typeof HttpAgent>[0],
  allowPrivate: boolean,
): { "http:": GuardedHttpAgent; "https:": GuardedHttpsAgent } {
  const filtering = { ...options, allowPrivateIPAddress: allowPrivate, allowMetaIPAddress: false };
  return { "http:": new GuardedHttpAgent(filtering), "https:": new GuardedHttpsAgent(filtering) };
}
