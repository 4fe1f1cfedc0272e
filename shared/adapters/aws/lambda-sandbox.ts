import { InvokeCommand, type InvokeCommandOutput, type LambdaClient } from "@aws-sdk/client-lambda";
import { logger } from "#shared/logger.ts";
import type { Sandbox, SandboxRequest, SandboxResult } from "#shared/ports/sandbox.ts";
import { withArgsBodyBase64, withArgsBodyParsed } from "#shared/sandbox/args-body.ts";
import type { OutboundLimits } from "#shared/sandbox/outbound-request.ts";
import { errorName, RunnerFunctions, type RunnerSpec, type WaiterTiming } from "./runner-functions.ts";

/** What the runner Lambda receives: the run, and how to reach this API for `svc` calls (a short-lived key). */
export interface RunnerEvent {
  tenantId: string;
  code: string;
  input: unknown;
  /** `input.args.body` is JSON text for the runner's child to parse (sent when its value would not fit). */
  parseArgsBody?: boolean;
  /** `input.args.body` is that text as base64, for the runner to decode (sent when neither of those fits). */
  argsBodyBase64?: boolean;
  timeoutMs: number;
  svc?: { baseUrl: string; apiKey: string };
  /** The code's fetch: the formula's or proxy's allowed hosts, and the control plane's per-run limits. */
  outbound?: { allowedHosts?: readonly string[]; limits?: OutboundLimits };
}

/** A synchronous Invoke's largest payload (6 MB). */
const MAX_INVOKE_PAYLOAD_BYTES = 6 * 1024 * 1024;

/** Invoke errors that mean "the function exists but cannot run yet": wait until it is Active, then retry. */
const NOT_READY = new Set(["ResourceConflictException", "ResourceNotReadyException"]);

/**
 * The sandbox in AWS: each run is an invocation of the tenant's own runner function (RunnerFunctions), so a
 * warm execution environment only ever holds one tenant's code and data. The function's role grants nothing
 * but its logs; it runs the code in the same permission-restricted child processes as local mode. `svc`
 * calls are made by the runner against the public API with a session key valid for the run only.
 */
export class LambdaSandbox implements Sandbox {
  private readonly functions: RunnerFunctions;
  private readonly outboundLimits: OutboundLimits | undefined;

  constructor(
    private readonly lambda: LambdaClient,
    spec: RunnerSpec,
    /** The public API, for `svc` calls; functions that only prepare runners do not need it. */
    private readonly apiBaseUrl: string | undefined,
    options: { waiter?: WaiterTiming; outboundLimits?: OutboundLimits } = {},
  ) {
    this.functions = new RunnerFunctions(lambda, spec, options.waiter);
    this.outboundLimits = options.outboundLimits;
  }

  /** The tenant's runner function name (tests and operators). */
  functionName(tenantId: string): string {
    return this.functions.nameOf(tenantId);
  }

  async run(request: SandboxRequest): Promise<SandboxResult> {
    const name = this.functions.nameOf(request.tenantId);
    const wantsSvc = Boolean(request.onSvcCall && request.issueSvcKey);
    if (wantsSvc && !this.apiBaseUrl) throw new Error("svc calls need SVC_API_URL");
    const apiKey = wantsSvc && request.issueSvcKey ? await request.issueSvcKey() : undefined;
    const event: RunnerEvent = {
      tenantId: request.tenantId,
      code: request.code,
      input: request.parseArgsBody ? withArgsBodyParsed(request.input) : request.input,
      timeoutMs: request.timeoutMs,
      ...(apiKey && this.apiBaseUrl ? { svc: { baseUrl: this.apiBaseUrl, apiKey } } : {}),
      ...(request.allowedHosts || this.outboundLimits
        ? {
            outbound: {
              ...(request.allowedHosts ? { allowedHosts: request.allowedHosts } : {}),
              ...(this.outboundLimits ? { limits: this.outboundLimits } : {}),
            },
          }
        : {}),
    };
    let payload = Buffer.from(JSON.stringify(event));
    // The value written out again can outgrow its text (`9e20` is 21 characters then: review round 9): then the
    // text, for the runner's child to parse; and where its escapes outgrow it too (strings of backslashes beside
    // 9e20: review round 10; a text answer of quoted CSV fields: round 11), its base64, 4/3 of any 4 MiB answer.
    // Past Lambda's invoke limit all the same (other input beside it), the run fails here, told.
    if (request.parseArgsBody && payload.length > MAX_INVOKE_PAYLOAD_BYTES)
      payload = Buffer.from(JSON.stringify({ ...event, input: request.input, parseArgsBody: true }));
    if (payload.length > MAX_INVOKE_PAYLOAD_BYTES)
      payload = Buffer.from(
        JSON.stringify({
          ...event,
          input: withArgsBodyBase64(request.input),
          ...(request.parseArgsBody ? { parseArgsBody: true } : {}),
          argsBodyBase64: true,
        }),
      );
    if (payload.length > MAX_INVOKE_PAYLOAD_BYTES)
      return {
        ok: false,
        error: { kind: "crashed", message: "The run's input is larger than a runner takes." },
      };
    const out = await this.invoke(request.tenantId, name, payload);
    if (out.FunctionError || !out.Payload)
      return { ok: false, error: { kind: "crashed", message: "The sandbox runner failed." } };
    return JSON.parse(Buffer.from(out.Payload).toString("utf8")) as SandboxResult;
  }

  /** Creates the tenant's runner function if needed and waits until it is Active; resolves with its name. */
  ensure(tenantId: string): Promise<string> {
    return this.functions.ensure(tenantId);
  }

  /**
   * Called when a tenant saves code: starts creating its function so the first run does not pay for it.
   * Does not wait for Active (the save should not take seconds longer); the first run waits if need be.
   */
  async prepare(tenantId: string): Promise<void> {
    try {
      await this.functions.create(tenantId);
    } catch (error) {
      // Best effort: the first run creates the function anyway. The SDK's message may echo the request.
      logger.warn("Could not prepare the tenant's sandbox runner", { tenantId, error: errorName(error) });
    }
  }

  async close(): Promise<void> {}

  /** The hot path is one Invoke; a missing or not yet Active function is dealt with once, then retried. */
  private async invoke(tenantId: string, name: string, payload: Uint8Array): Promise<InvokeCommandOutput> {
    const command = () => new InvokeCommand({ FunctionName: name, Payload: payload });
    try {
      return await this.lambda.send(command());
    } catch (error) {
      const kind = errorName(error);
      if (kind === "ResourceNotFoundException") {
        this.functions.forget(name);
        await this.functions.ensure(tenantId);
      } else if (kind && NOT_READY.has(kind)) await this.functions.active(name);
      else throw error;
    }
    return this.lambda.send(command());
  }
}
