import { createHash } from "node:crypto";
import {
  type Architecture,
  CreateFunctionCommand,
  type LambdaClient,
  type Runtime,
  waitUntilFunctionActiveV2,
} from "@aws-sdk/client-lambda";
import { LAMBDA_NODE_OPTIONS } from "#shared/node-options.ts";
import { MAX_PREFIX_LENGTH, PREFIX_PATTERN, type RunnerSpec, VERSION_LENGTH } from "./runner-spec.ts";

export { MAX_PREFIX_LENGTH, PREFIX_PATTERN, type RunnerSpec, VERSION_LENGTH } from "./runner-spec.ts";

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * A short hash of everything a function is created with. It is part of the name, so a deploy that changes
 * the bundle (its S3 key is the asset hash) or the sizing reaches every tenant as a new function: functions
 * are never updated in place, which leaves no update to race and no half-updated state. The old functions stay
 * behind, idle, until `scripts/prune-sandbox-runners.ts` deletes them (docs/operations.md).
 */
export function runnerVersion(spec: RunnerSpec): string {
  const { prefix: _prefix, stackName: _stackName, ...created } = spec;
  const canonical = JSON.stringify(Object.entries(created).sort(([a], [b]) => a.localeCompare(b)));
  return createHash("sha256").update(canonical).digest("hex").slice(0, VERSION_LENGTH);
}

export const errorName = (error: unknown): string | undefined =>
  error instanceof Error ? error.name : undefined;

export interface WaiterTiming {
  /** Seconds between polls of GetFunction while a function is Pending. */
  minDelay: number;
  maxDelay: number;
  /** Longest wait for a new function to become Active, in seconds. */
  maxWaitTime: number;
}

/** Creation takes a few seconds for a function outside a VPC; a synchronous caller cannot wait much longer. */
const DEFAULT_WAITER: WaiterTiming = { minDelay: 0.5, maxDelay: 2, maxWaitTime: 25 };

/**
 * The tenants' runner functions: `<prefix><tenant id>-<version>`, created through the Lambda API on first
 * need. Creation and the wait for Active are single-flight per function within a process; another process
 * creating the same function at the same time shows up as ResourceConflictException, and then we just wait.
 */
export class RunnerFunctions {
  readonly version: string;
  private readonly known = new Set<string>();
  private readonly creating = new Map<string, Promise<void>>();
  private readonly activating = new Map<string, Promise<void>>();

  constructor(
    private readonly lambda: LambdaClient,
    private readonly spec: RunnerSpec,
    private readonly waiter: WaiterTiming = DEFAULT_WAITER,
  ) {
    if (!PREFIX_PATTERN.test(spec.prefix))
      throw new Error(`The runner prefix must be 1-${MAX_PREFIX_LENGTH} of [A-Za-z0-9_-]`);
    this.version = runnerVersion(spec);
  }

  /** The tenant's function name; a tenant id that is not a UUID is a programming error. */
  nameOf(tenantId: string): string {
    if (!UUID.test(tenantId)) throw new TypeError("tenantId must be a UUID");
    return `${this.spec.prefix}${tenantId.toLowerCase()}-${this.version}`;
  }

  /** Makes sure the tenant's function exists and is Active; resolves with its name. */
  async ensure(tenantId: string): Promise<string> {
    const name = this.nameOf(tenantId);
    await this.created(name, tenantId);
    await this.active(name);
    return name;
  }

  /** Makes sure the tenant's function exists (it may still be Pending); at most one call per process. */
  async create(tenantId: string): Promise<string> {
    const name = this.nameOf(tenantId);
    await this.created(name, tenantId);
    return name;
  }

  /** Forget that a function exists (an invoke found it missing: someone deleted it). */
  forget(name: string): void {
    this.known.delete(name);
  }

  /** Waits until the function is Active (new, or reactivating after a long idle time). */
  active(name: string): Promise<void> {
    return once(this.activating, name, () => this.waitActive(name));
  }

  private created(name: string, tenantId: string): Promise<void> {
    if (this.known.has(name)) return Promise.resolve();
    return once(this.creating, name, async () => {
      try {
        await this.lambda.send(new CreateFunctionCommand(this.definition(name, tenantId)));
      } catch (error) {
        // It exists already: made by another container (perhaps right now), or before this one started.
        if (errorName(error) !== "ResourceConflictException") throw error;
      }
      this.known.add(name);
    });
  }

  private definition(name: string, tenantId: string) {
    const spec = this.spec;
    return {
      FunctionName: name,
      Description: `svc-vault sandbox runner of one tenant (customer code; no grants)`,
      Role: spec.roleArn,
      Code: { S3Bucket: spec.codeBucket, S3Key: spec.codeKey },
      Runtime: spec.runtime as Runtime,
      Handler: spec.handler,
      MemorySize: spec.memoryMb,
      Timeout: spec.timeoutSeconds,
      Architectures: [spec.architecture as Architecture],
      // Nothing secret, and nothing about the service: the runner needs no configuration.
      Environment: { Variables: { NODE_OPTIONS: LAMBDA_NODE_OPTIONS } },
      LoggingConfig: { LogGroup: spec.logGroup, LogFormat: "Text" as const },
      Tags: {
        "svc-vault:stack": spec.stackName,
        "svc-vault:tenant": tenantId.toLowerCase(),
        "svc-vault:runner-version": this.version,
      },
    };
  }

  private async waitActive(name: string): Promise<void> {
    try {
      await waitUntilFunctionActiveV2({ client: this.lambda, ...this.waiter }, { FunctionName: name });
    } catch (error) {
      // The waiter's message embeds the whole GetFunction answer (code URL, environment): keep it out.
      throw new Error(
        `The sandbox runner function did not become active (${errorName(error) ?? "unknown"}).`,
      );
    }
  }
}

/** Runs `work` for `key` unless a run for it is already in flight, which is shared instead. */
function once(flights: Map<string, Promise<void>>, key: string, work: () => Promise<void>): Promise<void> {
  const inFlight = flights.get(key);
  if (inFlight) return inFlight;
  const flight = work().finally(() => flights.delete(key));
  flights.set(key, flight);
  return flight;
}
