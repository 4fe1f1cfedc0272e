import {
  CreateFunctionCommand,
  GetFunctionCommand,
  InvokeCommand,
  type InvokeCommandOutput,
  LambdaClient,
} from "@aws-sdk/client-lambda";
import { mockClient } from "aws-sdk-client-mock";
import { afterEach, describe, expect, it } from "vitest";
import { LambdaSandbox, type RunnerEvent } from "#shared/adapters/aws/lambda-sandbox.ts";
import { type RunnerSpec, runnerVersion } from "#shared/adapters/aws/runner-functions.ts";

const lambda = mockClient(LambdaClient);
// The SDK types Payload as a blob adapter; the adapter only reads its bytes, which a Buffer holds.
const payload = (text: string) => Buffer.from(text) as unknown as InvokeCommandOutput["Payload"];
const okPayload = { Payload: payload(JSON.stringify({ ok: true, value: { body: 1 } })) };
afterEach(() => lambda.reset());

const TENANT = "0190f5b2-7c1e-7a3b-8d4e-1f2a3b4c5d6e";
const OTHER_TENANT = "0190f5b2-7c1e-7a3b-8d4e-aaaaaaaaaaaa";

const spec: RunnerSpec = {
  prefix: "SvcVault-ab12cd-",
  roleArn: "arn:aws:iam::123456789012:role/runner",
  codeBucket: "cdk-assets-123456789012-us-east-1",
  codeKey: "0123abcd.zip",
  runtime: "nodejs24.x",
  handler: "index.handler",
  memoryMb: 1024,
  timeoutSeconds: 240,
  architecture: "arm64",
  logGroup: "SvcVault-RunnerLogs",
  stackName: "SvcVault",
};

// Fast polling: the tests' "Pending" answers would otherwise wait for the real delays.
const newSandbox = (overrides: Partial<RunnerSpec> = {}) =>
  new LambdaSandbox(
    new LambdaClient({ region: "us-east-1" }),
    { ...spec, ...overrides },
    "https://api.example.com",
    {
      waiter: { minDelay: 0.01, maxDelay: 0.02, maxWaitTime: 2 },
    },
  );

const awsError = (name: string) => Object.assign(new Error(`${name}: details`), { name });
const active = { Configuration: { State: "Active" as const } };
const pending = { Configuration: { State: "Pending" as const } };

const payloadOf = (call: number) =>
  JSON.parse(
    Buffer.from(lambda.commandCalls(InvokeCommand)[call]?.args[0].input.Payload as Uint8Array).toString(),
  ) as RunnerEvent;
const invokedNames = () => lambda.commandCalls(InvokeCommand).map((c) => c.args[0].input.FunctionName);
const run = (sandbox: LambdaSandbox, tenantId = TENANT) =>
  sandbox.run({ tenantId, code: "c", input: {}, timeoutMs: 5000 });
// A response transform's run over a destination's answer (JSON unless told); what it sent, in bytes.
const runWithAnswer = async (body: string, parseArgsBody = true) => {
  lambda.on(InvokeCommand).resolves(okPayload);
  await newSandbox().run({
    tenantId: TENANT,
    code: "c",
    input: { args: { body, headers: {} }, configuration: {} },
    ...(parseArgsBody ? { parseArgsBody } : {}),
    timeoutMs: 5000,
  });
  const sent = lambda.commandCalls(InvokeCommand)[0]?.args[0].input.Payload as Uint8Array | undefined;
  return sent?.length ?? 0;
};

describe("LambdaSandbox", () => {
  it("invokes the tenant's existing function with the run and, when svc is wanted, a short-lived key and the API URL", async () => {
    lambda.on(InvokeCommand).resolves(okPayload);
    const sandbox = newSandbox();

    const withSvc = await sandbox.run({
      tenantId: TENANT,
      code: "module.exports = async () => 1",
      input: { a: 1, args: { body: '{"card":"4242"}', headers: {} } },
      parseArgsBody: true,
      timeoutMs: 5000,
      onSvcCall: async () => null,
      issueSvcKey: async () => "key_ses_temp",
    });
    const withoutSvc = await run(sandbox);

    expect(withSvc).toEqual({ ok: true, value: { body: 1 } });
    expect(withoutSvc.ok).toBe(true);
    const name = `SvcVault-ab12cd-${TENANT}-${runnerVersion(spec)}`;
    expect(name.length).toBeLessThanOrEqual(64);
    expect(invokedNames()).toEqual([name, name]);
    expect(payloadOf(0)).toEqual({
      tenantId: TENANT,
      code: "module.exports = async () => 1",
      // The JSON text parsed here: the event carries values (the text escaped again could pass 6 MB).
      input: { a: 1, args: { body: { card: "4242" }, headers: {} } },
      timeoutMs: 5000,
      svc: { baseUrl: "https://api.example.com", apiKey: "key_ses_temp" },
    });
    expect(payloadOf(1)).not.toHaveProperty("svc");
    expect(payloadOf(0)).not.toHaveProperty("parseArgsBody");
    expect(payloadOf(1)).not.toHaveProperty("parseArgsBody");
    expect(lambda.commandCalls(CreateFunctionCommand)).toHaveLength(0);
    expect(lambda.commandCalls(GetFunctionCommand)).toHaveLength(0);
  });

  it("sends a response transform's JSON answer of 4 MiB as its value, within Lambda's 6 MB invoke payload", async () => {
    // A destination's array of empty strings: as text inside the event, each `"` escaped once more made 7 MB
    // (review round 8); as the value it is the answer's own size.
    const body = `[${'"",'.repeat(1_398_000)}""]`;
    expect(body.length).toBeGreaterThan(4_000_000);
    expect(await runWithAnswer(body)).toBeLessThanOrEqual(6 * 1024 * 1024);
    expect((payloadOf(0).input as { args: { body: unknown[] } }).args.body).toHaveLength(1_398_001);
  });

  it("sends the answer as text for the runner to parse where its value would be the larger (9e20 written out)", async () => {
    // 4 MiB of `9e20`: as the value, written out again, 18 MB (review round 9); as its text, 4 MiB.
    const body = `[${"9e20,".repeat(838_859)}9e20]`;
    expect(await runWithAnswer(body)).toBeLessThanOrEqual(6 * 1024 * 1024);
    expect(payloadOf(0)).toMatchObject({ parseArgsBody: true, input: { args: { body } } });
  });

  it("sends the answer as base64 where its text and its value both outgrow the payload (backslashes beside 9e20)", async () => {
    // Escaped once more in the event the text is 26 bytes per 16, written out again the value 33 (review round 10):
    // the run failed, "larger than a runner takes", for a destination's valid 4 MiB answer.
    const unit = `"${"\\\\".repeat(4)}",9e20,`;
    const body = `[${unit.repeat(262_000)}0]`;
    expect(body.length).toBeLessThanOrEqual(4 * 1024 * 1024);
    expect(await runWithAnswer(body)).toBeLessThanOrEqual(6 * 1024 * 1024);
    const sent = payloadOf(0) as RunnerEvent & { input: { args: { body: string } } };
    expect(sent).toMatchObject({ parseArgsBody: true, argsBodyBase64: true });
    expect(Buffer.from(sent.input.args.body, "base64").toString()).toBe(body);
  });

  it("sends a text answer as base64 too where its text outgrows the payload (a CSV of quoted fields, round 11)", async () => {
    const row = `${Array.from({ length: 16 }, (_, i) => (i % 2 ? `"${i % 10}"` : `""`)).join(",")}\r\n`;
    const body = row.repeat(Math.floor((4 * 1024 * 1024) / row.length));
    // Before: nothing invoked, the run failed "larger than a runner takes" (6.7 MB as text escaped once more).
    expect(await runWithAnswer(body, false)).toBeLessThanOrEqual(6 * 1024 * 1024);
    const sent = payloadOf(0) as RunnerEvent & { input: { args: { body: string } } };
    expect(sent.argsBodyBase64).toBe(true);
    expect(sent).not.toHaveProperty("parseArgsBody");
    expect(Buffer.from(sent.input.args.body, "base64").toString()).toBe(body);
  });

  it("gives the runner the code's allowed hosts and the control plane's fetch limits", async () => {
    lambda.on(InvokeCommand).resolves(okPayload);
    const limits = { maxRequests: 2, maxBytesOut: 10, maxBytesIn: 20, timeoutMs: 300 };
    const sandbox = new LambdaSandbox(
      new LambdaClient({ region: "us-east-1" }),
      spec,
      "https://api.example.com",
      {
        outboundLimits: limits,
      },
    );

    await sandbox.run({
      tenantId: TENANT,
      code: "c",
      input: {},
      timeoutMs: 5000,
      allowedHosts: ["api.example.com"],
    });

    expect(payloadOf(0)).toMatchObject({ outbound: { allowedHosts: ["api.example.com"], limits } });
  });

  it("creates a missing function with the runner role, bundle, sizing and nothing secret, waits until Active, then invokes", async () => {
    lambda.on(InvokeCommand).rejectsOnce(awsError("ResourceNotFoundException")).resolves(okPayload);
    lambda.on(CreateFunctionCommand).resolves({});
    lambda.on(GetFunctionCommand).resolvesOnce(pending).resolves(active);
    const sandbox = newSandbox();

    expect(await run(sandbox)).toEqual({ ok: true, value: { body: 1 } });

    const name = sandbox.functionName(TENANT);
    expect(lambda.commandCalls(CreateFunctionCommand).map((c) => c.args[0].input)).toEqual([
      {
        FunctionName: name,
        Description: expect.any(String),
        Role: spec.roleArn,
        Code: { S3Bucket: spec.codeBucket, S3Key: spec.codeKey },
        Runtime: "nodejs24.x",
        Handler: "index.handler",
        MemorySize: 1024,
        Timeout: 240,
        Architectures: ["arm64"],
        Environment: { Variables: { NODE_OPTIONS: "--enable-source-maps --disable-proto=throw" } },
        LoggingConfig: { LogGroup: spec.logGroup, LogFormat: "Text" },
        Tags: {
          "svc-vault:stack": "SvcVault",
          "svc-vault:tenant": TENANT,
          "svc-vault:runner-version": runnerVersion(spec),
        },
      },
    ]);
    expect(lambda.commandCalls(GetFunctionCommand).length).toBe(2);
    expect(invokedNames()).toEqual([name, name]);
  });

  it("creates the function once for concurrent runs of one tenant", async () => {
    lambda
      .on(InvokeCommand)
      .rejectsOnce(awsError("ResourceNotFoundException"))
      .rejectsOnce(awsError("ResourceNotFoundException"))
      .rejectsOnce(awsError("ResourceNotFoundException"))
      .resolves(okPayload);
    lambda.on(CreateFunctionCommand).resolves({});
    lambda.on(GetFunctionCommand).resolvesOnce(pending).resolves(active);
    const sandbox = newSandbox();

    const results = await Promise.all([run(sandbox), run(sandbox), run(sandbox)]);

    expect(results.every((r) => r.ok)).toBe(true);
    expect(lambda.commandCalls(CreateFunctionCommand)).toHaveLength(1);
    expect(lambda.commandCalls(InvokeCommand)).toHaveLength(6);
  });

  it("waits for a function another container is creating at the same time (conflict on create)", async () => {
    lambda.on(InvokeCommand).rejectsOnce(awsError("ResourceNotFoundException")).resolves(okPayload);
    lambda.on(CreateFunctionCommand).rejects(awsError("ResourceConflictException"));
    lambda.on(GetFunctionCommand).resolvesOnce(pending).resolves(active);

    expect(await run(newSandbox())).toEqual({ ok: true, value: { body: 1 } });
    expect(lambda.commandCalls(CreateFunctionCommand)).toHaveLength(1);
    expect(lambda.commandCalls(GetFunctionCommand)).toHaveLength(2);
    expect(lambda.commandCalls(InvokeCommand)).toHaveLength(2);
  });

  it.each(["ResourceConflictException", "ResourceNotReadyException"])(
    "waits for a function that exists but is not Active yet (%s on invoke), without creating it",
    async (error) => {
      lambda.on(InvokeCommand).rejectsOnce(awsError(error)).resolves(okPayload);
      lambda.on(GetFunctionCommand).resolvesOnce(pending).resolves(active);

      expect((await run(newSandbox())).ok).toBe(true);
      expect(lambda.commandCalls(CreateFunctionCommand)).toHaveLength(0);
      expect(lambda.commandCalls(GetFunctionCommand)).toHaveLength(2);
    },
  );

  it("gives two tenants two functions, and a new bundle a new function", async () => {
    lambda.on(InvokeCommand).resolves(okPayload);
    const sandbox = newSandbox();

    await run(sandbox, TENANT);
    await run(sandbox, OTHER_TENANT);
    await run(newSandbox({ codeKey: "4567ef01.zip" }), TENANT);

    const [first, second, third] = invokedNames();
    expect(new Set([first, second, third]).size).toBe(3);
    expect(second).toContain(OTHER_TENANT);
    expect(third).toContain(TENANT);
  });

  it("refuses a tenant id that is not a UUID (it names the function)", async () => {
    await expect(run(newSandbox(), "../other")).rejects.toThrow(TypeError);
    expect(lambda.commandCalls(InvokeCommand)).toHaveLength(0);
  });

  it("reports a failed runner as a crash without its details", async () => {
    lambda
      .on(InvokeCommand)
      .resolves({ FunctionError: "Unhandled", Payload: payload('{"errorMessage":"/var/task secret"}') });

    expect(await run(newSandbox())).toEqual({
      ok: false,
      error: { kind: "crashed", message: "The sandbox runner failed." },
    });
  });

  it("rejects with a message free of the waiter's dump when the function fails to become Active", async () => {
    lambda.on(InvokeCommand).rejects(awsError("ResourceNotFoundException"));
    lambda.on(CreateFunctionCommand).resolves({});
    lambda.on(GetFunctionCommand).resolves({
      Configuration: { State: "Failed", Environment: { Variables: { NODE_OPTIONS: "x" } } },
      Code: { Location: "https://signed.example/secret" },
    });

    const failure = await run(newSandbox()).catch((error: Error) => error);
    expect(failure).toBeInstanceOf(Error);
    expect(String((failure as Error).message)).toMatch(/did not become active/);
    expect(String((failure as Error).message)).not.toMatch(/signed|Environment/);
  });

  it("prepare creates the function without waiting, once per process, and never rejects", async () => {
    lambda.on(CreateFunctionCommand).resolvesOnce({}).rejects(awsError("AccessDeniedException"));
    const sandbox = newSandbox();

    await sandbox.prepare(TENANT);
    await sandbox.prepare(TENANT);
    await expect(sandbox.prepare(OTHER_TENANT)).resolves.toBeUndefined();

    expect(lambda.commandCalls(CreateFunctionCommand).map((c) => c.args[0].input.FunctionName)).toEqual([
      sandbox.functionName(TENANT),
      sandbox.functionName(OTHER_TENANT),
    ]);
    expect(lambda.commandCalls(GetFunctionCommand)).toHaveLength(0);
  });

  it("ensure creates and waits, and is a no-op create for a function that exists", async () => {
    lambda.on(CreateFunctionCommand).rejects(awsError("ResourceConflictException"));
    lambda.on(GetFunctionCommand).resolves(active);

    expect(await newSandbox().ensure(TENANT)).toBe(newSandbox().functionName(TENANT));
    expect(lambda.commandCalls(CreateFunctionCommand)).toHaveLength(1);
    expect(lambda.commandCalls(GetFunctionCommand)).toHaveLength(1);
  });

  it("refuses a prefix that would make names too long or invalid", () => {
    expect(() => newSandbox({ prefix: "a".repeat(20) })).toThrow(/prefix/);
    expect(() => newSandbox({ prefix: "bad:prefix" })).toThrow(/prefix/);
  });
});
