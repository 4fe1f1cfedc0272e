import { GetParameterCommand, SSMClient } from "@aws-sdk/client-ssm";
import { mockClient } from "aws-sdk-client-mock";
import { afterEach, describe, expect, it } from "vitest";
import { SsmRootKeyVerifier } from "#shared/adapters/aws/ssm-root-key.ts";
import { TestClock } from "#shared/adapters/clock.ts";
import { hashKey } from "#shared/ids.ts";

const ssm = mockClient(SSMClient);
afterEach(() => ssm.reset());

describe("SsmRootKeyVerifier", () => {
  it("reads the hash with decryption once per cache period and compares it", async () => {
    ssm.on(GetParameterCommand).resolves({ Parameter: { Value: hashKey("key_root_right") } });
    const clock = new TestClock();
    const verifier = new SsmRootKeyVerifier(new SSMClient({ region: "us-east-1" }), "/svc/root", clock);

    const right = await verifier.isRootKey(hashKey("key_root_right"));
    const wrong = await verifier.isRootKey(hashKey("key_root_wrong"));
    clock.advance(61);
    await verifier.isRootKey(hashKey("key_root_right"));

    expect([right, wrong]).toEqual([true, false]);
    const calls = ssm.commandCalls(GetParameterCommand);
    expect(calls).toHaveLength(2);
    expect(calls[0]?.args[0].input).toEqual({ Name: "/svc/root", WithDecryption: true });
  });

  it("refuses every key when the parameter holds no valid hash", async () => {
    ssm.on(GetParameterCommand).resolves({ Parameter: { Value: "not-a-hash" } });
    const verifier = new SsmRootKeyVerifier(
      new SSMClient({ region: "us-east-1" }),
      "/svc/root",
      new TestClock(),
    );

    expect(await verifier.isRootKey(hashKey("not-a-hash"))).toBe(false);
  });
});
