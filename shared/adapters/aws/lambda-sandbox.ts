import { InvokeCommand, type LambdaClient } from "@aws-sdk/client-lambda";
import type { Sandbox, SandboxRequest, SandboxResult } from "#shared/sandbox/sandbox.ts";

/** What the runner Lambda receives: the run, and how to reach this API for `svc` calls (a short-lived key). */
export interface RunnerEvent {
  tenantId: string;
  code: string;
  input: unknown;
  timeoutMs: number;
  svc?: { baseUrl: string; apiKey: string };
}

/**
 * The sandbox in AWS: each run is an invocation of the dedicated runner function, which holds no grant on
 * the table, the key or anything else, and runs the code in the same permission-restricted child processes.
 * `svc` calls are made by the runner against the public API with a session key valid for the run only.
 */
export class LambdaSandbox implements Sandbox {
  constructor(
    private readonly lambda: LambdaClient,
    private readonly functionName: string,
    private readonly apiBaseUrl: string,
  ) {}

  async run(request: SandboxRequest): Promise<SandboxResult> {
    const apiKey = request.onSvcCall && request.issueSvcKey ? await request.issueSvcKey() : undefined;
    const event: RunnerEvent = {
      tenantId: request.tenantId,
      code: request.code,
      input: request.input,
      timeoutMs: request.timeoutMs,
      ...(apiKey ? { svc: { baseUrl: this.apiBaseUrl, apiKey } } : {}),
    };
    const out = await this.lambda.send(
      new InvokeCommand({ FunctionName: this.functionName, Payload: Buffer.from(JSON.stringify(event)) }),
    );
    if (out.FunctionError || !out.Payload)
      return { ok: false, error: { kind: "crashed", message: "The sandbox runner failed." } };
    return JSON.parse(Buffer.from(out.Payload).toString("utf8")) as SandboxResult;
  }

  async close(): Promise<void> {}
}
