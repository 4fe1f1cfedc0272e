import type { Sandbox, SandboxResult } from "#shared/ports/sandbox.ts";

/**
 * The sandbox of a function that runs no tenant code (SVC_SANDBOX=none): every run is refused, so a wiring
 * mistake fails loudly instead of running customer code somewhere it must not run.
 */
export class NoSandbox implements Sandbox {
  async run(): Promise<SandboxResult> {
    throw new Error("This function runs no tenant code (SVC_SANDBOX=none)");
  }

  async close(): Promise<void> {}
}
