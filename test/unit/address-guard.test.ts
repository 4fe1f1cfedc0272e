import { describe, expect, it } from "vitest";
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

  it("knows this machine's addresses", () => {
    expect(isLocalAddress("127.0.0.1")).toBe(true);
    expect(isLocalAddress("::1")).toBe(true);
    expect(isLocalAddress("0.0.0.0")).toBe(true);
    expect(isLocalAddress("93.184.215.14")).toBe(false);
  });
});
