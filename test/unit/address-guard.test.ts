import dns from "node:dns";
import { describe, expect, it, vi } from "vitest";
import { embeddedV4, isLocalAddress, protectEndpoint, refusal } from "#shared/egress/address-guard.ts";

describe("address guard", () => {
  it("reads the IPv4 address inside mapped, compatible and NAT64 IPv6 addresses", () => {
    expect(embeddedV4("::ffff:169.254.169.254")).toBe("169.254.169.254");
    expect(embeddedV4("::ffff:a9fe:a9fe")).toBe("169.254.169.254");
    expect(embeddedV4("0:0:0:0:0:ffff:7f00:1")).toBe("127.0.0.1");
    expect(embeddedV4("64:ff9b::a9fe:a9fe")).toBe("169.254.169.254");
    expect(embeddedV4("::a9fe:a9fe")).toBe("169.254.169.254");
    expect(embeddedV4("::1")).toBeUndefined();
    expect(embeddedV4("2001:db8::1")).toBeUndefined();
    expect(embeddedV4("169.254.169.254")).toBeUndefined();
  });

  it("always refuses link-local, metadata and this-network addresses, in any spelling", () => {
    for (const address of [
      "169.254.169.254",
      "169.254.170.2",
      "::ffff:169.254.169.254",
      "64:ff9b::a9fe:a9fe",
      "fe80::1",
      "FE80::abcd",
      "fd00:ec2::254",
      "100.100.100.200",
      "168.63.129.16",
      "192.0.0.192",
      "0.0.0.0",
      "::",
    ])
      expect(refusal(address, 80), address).toBeDefined();
    for (const address of ["93.184.215.14", "10.0.0.1", "127.0.0.1", "2001:db8::1", "fd00::1"])
      expect(refusal(address, 80), address).toBeUndefined();
  });

  it("refuses a protected endpoint's port on every local address, and its own host, until lifted", () => {
    const lift = protectEndpoint("http://127.0.0.1:45123");
    const liftRemote = protectEndpoint("http://dynamodb.internal:8000");

    expect(refusal("127.0.0.1", 45123)).toBeDefined();
    expect(refusal("127.9.9.9", 45123)).toBeDefined();
    expect(refusal("::1", 45123)).toBeDefined();
    expect(refusal("::ffff:127.0.0.1", 45123)).toBeDefined();
    expect(refusal("127.0.0.1", 45124)).toBeUndefined();
    expect(refusal("10.1.2.3", 8000, "DynamoDB.internal.")).toBeDefined();
    expect(refusal("10.1.2.3", 8001, "dynamodb.internal")).toBeUndefined();
    lift();
    liftRemote();
    expect(refusal("127.0.0.1", 45123)).toBeUndefined();
    expect(refusal("10.1.2.3", 8000, "dynamodb.internal")).toBeUndefined();
  });

  it("refuses the addresses a protected endpoint's name resolves to, and every local one when one is local", async () => {
    // A DynamoDB in a container (`http://dynamodb:8000`): protected by its name alone, a proxy reached it through
    // its address or another name for it (proxies review, 28 Nov 2026).
    const answers: Record<string, string[]> = {
      "dynamo.container.test": ["10.9.8.7"],
      "host.container.test": ["127.0.0.1"],
    };
    const lookup = vi.spyOn(dns, "lookup").mockImplementation(((
      hostname: string,
      _options: unknown,
      callback: (error: Error | null, found: dns.LookupAddress[]) => void,
    ) => {
      const found = answers[hostname];
      if (!found) return callback(Object.assign(new Error("ENOTFOUND"), { code: "ENOTFOUND" }), []);
      callback(
        null,
        found.map((address) => ({ address, family: 4 })),
      );
    }) as unknown as typeof dns.lookup);
    try {
      const lift = protectEndpoint("http://dynamo.container.test:8000");
      const liftHost = protectEndpoint("http://host.container.test:8001");

      expect(refusal("10.9.8.7", 8000, "alias.attacker.test")).toBeDefined();
      expect(refusal("10.9.8.7", 8000)).toBeDefined();
      expect(refusal("::ffff:10.9.8.7", 8000)).toBeDefined();
      expect(refusal("10.9.8.7", 8002)).toBeUndefined();
      expect(refusal("127.0.0.1", 8001)).toBeDefined();
      expect(refusal("::1", 8001)).toBeDefined();
      lift();
      liftHost();
      expect(refusal("10.9.8.7", 8000)).toBeUndefined();
    } finally {
      lookup.mockRestore();
    }
  });

  it("refuses its address from the moment it is protected, even when the first lookup fails (container not up yet)", async () => {
    let up = false;
    const lookup = vi.spyOn(dns, "lookup").mockImplementation(((
      hostname: string,
      _options: unknown,
      callback: (error: Error | null, found: dns.LookupAddress[]) => void,
    ) => {
      // As a real resolver: the answer comes later; before the container is up, ENOTFOUND.
      setTimeout(() => {
        if (hostname !== "dynamo.r2b.test" || !up)
          return callback(Object.assign(new Error("ENOTFOUND"), { code: "ENOTFOUND" }), []);
        callback(null, [{ address: "10.9.8.6", family: 4 }]);
      }, 5);
    }) as unknown as typeof dns.lookup);
    try {
      const lift = protectEndpoint("http://dynamo.r2b.test:8000");
      await new Promise((resolve) => setTimeout(resolve, 20)); // the first lookup failed
      up = true; // the DynamoDB container is up: proxies can reach 10.9.8.6:8000
      await new Promise((resolve) => setTimeout(resolve, 20));
      // It was allowed until the next resolution, a minute later (review round 2, 28 Nov 2026).
      const refused = refusal("10.9.8.6", 8000);
      lift();
      expect(refused).toBeDefined();
    } finally {
      lookup.mockRestore();
    }
  });

  it("asks the resolver once a second, not once more a second for every minute it has waited", async () => {
    vi.useFakeTimers();
    let lookups = 0;
    vi.spyOn(dns, "lookup").mockImplementation(((
      _hostname: string,
      _options: unknown,
      callback: (error: Error | null, found: dns.LookupAddress[]) => void,
    ) => {
      lookups++;
      // host.docker.internal on a Linux host without extra_hosts: never resolves.
      setTimeout(() => callback(Object.assign(new Error("ENOTFOUND"), { code: "ENOTFOUND" }), []), 10);
    }) as unknown as typeof dns.lookup);
    const lift = protectEndpoint("http://never.r3b.test:8001");
    try {
      await vi.advanceTimersByTimeAsync(60 * 60_000); // one hour of a local server's life
      const before = lookups;
      await vi.advanceTimersByTimeAsync(10_000);
      const perSecond = (lookups - before) / 10;
      // Meanwhile it refuses private addresses on its port (the safe side), as documented.
      expect(refusal("10.1.2.3", 8001)).toBeDefined();
      expect(perSecond).toBeLessThanOrEqual(1.1);
    } finally {
      lift();
      vi.useRealTimers();
      vi.restoreAllMocks();
    }
  });

  it("knows this machine's addresses", () => {
    expect(isLocalAddress("127.0.0.1")).toBe(true);
    expect(isLocalAddress("::1")).toBe(true);
    expect(isLocalAddress("0.0.0.0")).toBe(true);
    expect(isLocalAddress("93.184.215.14")).toBe(false);
  });
});
