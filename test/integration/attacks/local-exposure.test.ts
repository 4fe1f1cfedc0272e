/**
 * Attack: another machine on the network talks to local mode's internals. DynamoDB Local checks no
 * credentials, so whoever reaches its port reads and writes every table (sealed data, key hashes, the
 * wrapped data keys); the API has a root key. Both must listen on loopback only.
 *
 * Played from this machine against its own non-loopback addresses (what a neighbour would connect to).
 *
 * And a web page in a browser on this machine, through DNS rebinding: its own name re-pointed at 127.0.0.1, it is
 * same-origin with DynamoDB Local's port and sends that name as Host. DynamoDB Local serves only loopback names.
 */
import { request } from "node:http";
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

/** A ListTables call as a page's script would send it: signed (over made-up credentials), with the given Host. */
function listTables(port: number, host: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const body = "{}";
    const req = request(
      {
        host: "127.0.0.1",
        port,
        method: "POST",
        path: "/",
        headers: {
          Host: host,
          "Content-Type": "application/x-amz-json-1.0",
          "Content-Length": String(Buffer.byteLength(body)),
          "X-Amz-Target": "DynamoDB_20120810.ListTables",
          "X-Amz-Date": "20260101T000000Z",
          Authorization:
            "AWS4-HMAC-SHA256 Credential=x/20260101/us-east-1/dynamodb/aws4_request, SignedHeaders=host;x-amz-date, Signature=00",
        },
      },
      (res) => {
        let text = "";
        res.setEncoding("utf8");
        res.on("data", (chunk: string) => {
          text += chunk;
        });
        res.on("end", () => resolve({ status: res.statusCode ?? 0, body: text }));
      },
    );
    req.on("error", reject);
    req.end(body);
  });
}

describe("DNS rebinding: DynamoDB Local serves only the Host names of this machine", () => {
  it("refuses a call whose Host is a page's own name, and answers 127.0.0.1, localhost and [::1]", async () => {
    const port = Number(new URL(inject("dynamodbEndpoint")).port);
    // Before: 200 with the table names (and any write, e.g. a planted API key item, went through the same way).
    for (const name of ["rebind.evil", "localhost.rebind.evil", "127.0.0.1.rebind.evil"]) {
      const refused = await listTables(port, `${name}:${port}`);
      expect({ name, status: refused.status }).toEqual({ name, status: 404 });
      expect(refused.body).not.toContain("TableNames");
    }
    for (const name of ["127.0.0.1", "localhost", "dev.localhost", "[::1]"]) {
      const answered = await listTables(port, `${name}:${port}`);
      expect({ name, status: answered.status }).toEqual({ name, status: 200 });
      expect(JSON.parse(answered.body)).toHaveProperty("TableNames");
    }
  });
});
