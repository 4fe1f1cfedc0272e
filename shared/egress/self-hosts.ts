import dns from "node:dns";
import type { LookupFunction } from "node:net";
import { isLocalAddress, refusingLookup } from "./address-guard.ts";
import { SelfDestinationError } from "./errors.ts";

export interface SelfHost {
  hostname: string;
  port: number | undefined;
}

/** Entries that are not host[:port] are skipped: no destination URL's host could match them anyway. */
export function parseSelfHosts(entries: readonly string[]): SelfHost[] {
  const hosts: SelfHost[] = [];
  for (const entry of entries) {
    const match = /^(\[[^\]]+\]|[^:[\]]+)(?::(\d{1,5}))?$/.exec(entry.trim());
    if (!match?.[1]) continue;
    try {
      const { hostname } = new URL(`http://${match[1]}`); // same normalization as the destination's
      hosts.push({
        hostname: stripDot(hostname),
        port: match[2] === undefined ? undefined : Number(match[2]),
      });
    } catch {
      // not a host
    }
  }
  return hosts;
}

export function stripDot(hostname: string): string {
  return hostname.endsWith(".") ? hostname.slice(0, -1) : hostname;
}

// dns.lookup read at call time (not bound at import) so there is one resolution path, filtered or not.
export const plainLookup: LookupFunction = (hostname, options, callback) => {
  dns.lookup(hostname, options, callback);
};

/** A name that resolves to this machine on the service's own port is the service itself. */
export const selfGuardedLookup: LookupFunction = refusingLookup(plainLookup, (address) =>
  isLocalAddress(address) ? new SelfDestinationError("resolves to this service") : undefined,
);
