/**
 * Attack: another machine on the network talks to local mode's internals. DynamoDB Local checks no
 * credentials, so whoever reaches its port reads and writes every table (sealed data, key hashes, the
 * wrapped data keys); the API has a root key. Both must listen on loopback only.
 *
 * Played from this machine against its own non-loopback addresses (what a neighbour would connect to).
 */
import { Socket } from "node:net";
import os from "node:os";
import { describe, expect, inject, it } from "vitest";
import { useService } from "#test/support/service.ts";

type Outcome = "connected" | "refused" | "timeout";

function tryConnect(host: string, port: number, timeoutMs = 2_000): Promise<Outcome> {
  return new Promise((resolve) => {
    const socket = new Socket();
    const done = (outcome: Outcome) => {
      clearTimeout(timer);
      socket.destroy();
      resolve(outcome);
    };
    const timer = setTimeout(() => done("timeout"), timeoutMs);
    socket.once("connect", () => done("connected"));
    socket.once("error", () => done("refused"));
    socket.connect({ host, port });
  });
}

/** This machine's addresses that are neither loopback nor link-local (those need a scope id). */
function externalAddresses(): string[] {
  return Object.values(os.networkInterfaces())
    .flatMap((infos) => infos ?? [])
    .filter((info) => !info.internal && !info.address.toLowerCase().startsWith("fe80:"))
    .map((info) => info.address);
}

const addresses = externalAddresses();
const service = useService();

// Skipped (with the reason in its name) only where there is no other address to connect to.
const title =
  addresses.length > 0
    ? "local mode listens on loopback only"
    : "local mode listens on loopback only (skipped: this machine has no non-loopback network address)";

describe.skipIf(addresses.length === 0)(title, () => {
  it("DynamoDB Local answers on 127.0.0.1 and refuses connections on every other address", async () => {
    const port = Number(new URL(inject("dynamodbEndpoint")).port);
    expect(await tryConnect("127.0.0.1", port)).toBe("connected");
    for (const address of addresses)
      expect({ address, outcome: await tryConnect(address, port) }).not.toEqual({
        address,
        outcome: "connected",
      });
  });

  it("the API answers on 127.0.0.1 and refuses connections on every other address", async () => {
    const port = Number(new URL(service.url).port);
    expect(new URL(service.url).hostname).toBe("127.0.0.1");
    expect((await fetch(`${service.url}/healthz`)).status).toBe(200);
    for (const address of addresses)
      expect({ address, outcome: await tryConnect(address, port) }).not.toEqual({
        address,
        outcome: "connected",
      });
  });
});
