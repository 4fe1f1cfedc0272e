import { GetParameterCommand, SSMClient } from "@aws-sdk/client-ssm";
import { mockClient } from "aws-sdk-client-mock";
import { afterEach, describe, expect, it, vi } from "vitest";
import { SsmRootKeyVerifier } from "#shared/adapters/aws/ssm-root-key.ts";
import { hashKey } from "#shared/ids.ts";

const ssm = mockClient(SSMClient);
afterEach(() => {
  ssm.reset();
  vi.useRealTimers();
});

describe("SsmRootKeyVerifier", () => {
  it("reads the hash with decryption once per cache period and compares it", async () => {
    // Powertools Parameters times its cache with Date.now().
    vi.useFakeTimers({ toFake: ["Date"], now: new Date("2026-01-01T00:00:00Z") });
    ssm.on(GetParameterCommand).resolves({ Parameter: { Value: hashKey("key_root_right") } });
    const verifier = new SsmRootKeyVerifier(new SSMClient({ region: "us-east-1" }), "/svc/root");

    const right = await verifier.isRootKey(hashKey("key_root_right"));
    const wrong = await verifier.isRootKey(hashKey("key_root_wrong"));
    vi.advanceTimersByTime(30_000);
    await verifier.isRootKey(hashKey("key_root_right"));
    expect(ssm.commandCalls(GetParameterCommand)).toHaveLength(1);
    vi.advanceTimersByTime(31_000);
    await verifier.isRootKey(hashKey("key_root_right"));

    expect([right, wrong]).toEqual([true, false]);
    const calls = ssm.commandCalls(GetParameterCommand);
    expect(calls).toHaveLength(2);
    expect(calls[0]?.args[0].input).toEqual({ Name: "/svc/root", WithDecryption: true });
  });

  it("refuses every key when the parameter holds no valid hash", async () => {
    ssm.on(GetParameterCommand).resolves({ Parameter: { Value: "not-a-hash" } });
    const verifier = new SsmRootKeyVerifier(new SSMClient({ region: "us-east-1" }), "/svc/root");

    expect(await verifier.isRootKey(hashKey("not-a-hash"))).toBe(false);
  });

  it("fails the check, never accepting the key, when SSM cannot be read", async () => {
    ssm.on(GetParameterCommand).rejects(new Error("AccessDenied"));
    const verifier = new SsmRootKeyVerifier(new SSMClient({ region: "us-east-1" }), "/svc/root");

    await expect(verifier.isRootKey(hashKey("key_root_right"))).rejects.toThrow();
  });
});
