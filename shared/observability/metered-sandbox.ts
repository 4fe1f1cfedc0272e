import type { Clock } from "#shared/ports/clock.ts";
import type { Metrics } from "#shared/ports/metrics.ts";
import type { Sandbox, SandboxErrorKind, SandboxRequest, SandboxResult } from "#shared/ports/sandbox.ts";
import { METRIC } from "./metric-names.ts";

/** Outcomes that are a limit of the sandbox stopping the code (its time, its memory or result size). */
const REFUSALS: ReadonlySet<SandboxErrorKind> = new Set(["timeout", "memory"]);

/**
 * `inner` with every run measured: SandboxRunDuration, and SandboxRefusals when a limit stopped the code. The
 * composition wraps whichever sandbox it chose (shared/composition/sandbox.ts), so every run of tenant code
 * passes here: transforms, reactors, formulas.
 */
export class MeteredSandbox implements Sandbox {
  constructor(
    readonly inner: Sandbox,
    private readonly deps: { metrics: Metrics; clock: Clock },
  ) {}

  async run(request: SandboxRequest): Promise<SandboxResult> {
    const started = this.deps.clock.now().getTime();
    const result = await this.inner.run(request);
    const options = { metadata: { tenant_id: request.tenantId } };
    this.deps.metrics.timing(METRIC.sandboxRunDuration, this.deps.clock.now().getTime() - started, options);
    if (!result.ok && REFUSALS.has(result.error.kind))
      this.deps.metrics.count(METRIC.sandboxRefusals, 1, options);
    return result;
  }

  async warm(): Promise<void> {
    await this.inner.warm?.();
  }

  async prepare(tenantId: string): Promise<void> {
    await this.inner.prepare?.(tenantId);
  }

  close(): Promise<void> {
    return this.inner.close();
  }
}
