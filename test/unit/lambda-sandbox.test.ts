import { InvokeCommand, type InvokeCommandOutput, LambdaClient } from "@aws-sdk/client-lambda";
import { mockClient } from "aws-sdk-client-mock";
import { afterEach, describe, expect, it } from "vitest";
import { LambdaSandbox, type RunnerEvent } from "#shared/adapters/aws/lambda-sandbox.ts";

const lambda = mockClient(LambdaClient);
// The SDK types Payload as a blob adapter; the adapter only reads its bytes, which a Buffer holds.
const payload = (text: string) => Buffer.from(text) as unknown as InvokeCommandOutput["Payload"];
afterEach(() => lambda.reset());

const payloadOf = (call: number) =>
  JSON.parse(
    Buffer.from(lambda.commandCalls(InvokeCommand)[call]?.args[0].input.Payload as Uint8Array).toString(),
  ) as RunnerEvent;

describe("LambdaSandbox", () => {
  it("invokes the runner with the run and, when svc is wanted, a short-lived key and the API URL", async () => {
    lambda.on(InvokeCommand).resolves({ Payload: payload(JSON.stringify({ ok: true, value: { body: 1 } })) });
    const sandbox = new LambdaSandbox(
      new LambdaClient({ region: "us-east-1" }),
      "runner-fn",
      "https://api.example.com",
    );

    const withSvc = await sandbox.run({
      tenantId: "t1",
      code: "module.exports = async () => 1",
      input: { a: 1 },
      timeoutMs: 5000,
      onSvcCall: async () => null,
      issueSvcKey: async () => "key_ses_temp",
    });
    const withoutSvc = await sandbox.run({ tenantId: "t1", code: "c", input: {}, timeoutMs: 5000 });

    expect(withSvc).toEqual({ ok: true, value: { body: 1 } });
    expect(withoutSvc.ok).toBe(true);
    expect(lambda.commandCalls(InvokeCommand)[0]?.args[0].input.FunctionName).toBe("runner-fn");
    expect(payloadOf(0)).toEqual({
      tenantId: "t1",
      code: "module.exports = async () => 1",
      input: { a: 1 },
      timeoutMs: 5000,
      svc: { baseUrl: "https://api.example.com", apiKey: "key_ses_temp" },
    });
    expect(payloadOf(1)).not.toHaveProperty("svc");
  });

  it("reports a failed runner as a crash without its details", async () => {
    lambda
      .on(InvokeCommand)
      .resolves({ FunctionError: "Unhandled", Payload: payload('{"errorMessage":"/var/task secret"}') });
    const sandbox = new LambdaSandbox(
      new LambdaClient({ region: "us-east-1" }),
      "runner-fn",
      "https://api.example.com",
    );

    const result = await sandbox.run({ tenantId: "t1", code: "c", input: {}, timeoutMs: 5000 });

    expect(result).toEqual({ ok: false, error: { kind: "crashed", message: "The sandbox runner failed." } });
  });
});
