import { GetParameterCommand, SSMClient } from "@aws-sdk/client-ssm";
import { mockClient } from "aws-sdk-client-mock";
import { afterEach, describe, expect, it } from "vitest";
import { SsmRootKeyVerifier } from "#shared/adapters/aws/ssm-root-key.ts";
import { hashKey } from "#shared/ids.ts";
import { handClock } from "#test/support/hand-clock.ts";

const ssm = mockClient(SSMClient);
afterEach(() => ssm.reset());

const verifierOn = (clock = handClock()) =>
  new SsmRootKeyVerifier(new SSMClient({ region: "us-east-1" }), "/svc/root", clock);

describe("SsmRootKeyVerifier", () => {
  it("reads the hash with decryption once per cache period and compares it", async () => {
    ssm.on(GetParameterCommand).resolves({ Parameter: { Value: hashKey("key_root_right") } });
    const clock = handClock();
    const verifier = verifierOn(clock);

    const right = await verifier.isRootKey(hashKey("key_root_right"));
    const wrong = await verifier.isRootKey(hashKey("key_root_wrong"));
    clock.advance(30_000);
    await verifier.isRootKey(hashKey("key_root_right"));
    expect(ssm.commandCalls(GetParameterCommand)).toHaveLength(1);
    clock.advance(31_000);
    await verifier.isRootKey(hashKey("key_root_right"));

    expect([right, wrong]).toEqual([true, false]);
    const calls = ssm.commandCalls(GetParameterCommand);
    expect(calls).toHaveLength(2);
    expect(calls[0]?.args[0].input).toEqual({ Name: "/svc/root", WithDecryption: true });
  });

  it("answers concurrent checks of a cold cache with one read", async () => {
    ssm.on(GetParameterCommand).resolves({ Parameter: { Value: hashKey("key_root_right") } });
    const verifier = verifierOn();

    const answers = await Promise.all(
      ["key_root_right", "key_root_wrong", "key_root_right"].map((key) => verifier.isRootKey(hashKey(key))),
    );

    expect(answers).toEqual([true, false, true]);
    expect(ssm.commandCalls(GetParameterCommand)).toHaveLength(1);
  });

  it("refuses every key when the parameter holds no valid hash, reading it again only when its time is up", async () => {
    ssm.on(GetParameterCommand).resolves({ Parameter: { Value: "not-a-hash" } });
    const verifier = verifierOn();

    expect(await verifier.isRootKey(hashKey("not-a-hash"))).toBe(false);
    expect(await verifier.isRootKey("not-a-hash")).toBe(false);
    expect(ssm.commandCalls(GetParameterCommand)).toHaveLength(1);
  });

  it("fails the check, never accepting the key, when SSM cannot be read, and reads again on the next check", async () => {
    ssm
      .on(GetParameterCommand)
      .rejectsOnce(new Error("AccessDenied"))
      .resolves({ Parameter: { Value: hashKey("key_root_right") } });
    const verifier = verifierOn();

    await expect(verifier.isRootKey(hashKey("key_root_right"))).rejects.toThrow("AccessDenied");
    expect(await verifier.isRootKey(hashKey("key_root_right"))).toBe(true);
    expect(ssm.commandCalls(GetParameterCommand)).toHaveLength(2);
  });
});
