/**
 * The code sandbox port: runs a tenant's JavaScript (proxy transforms, reactor formulas) on detokenized data.
 * Locally a pool of permission-restricted child Node processes (pool.ts); in AWS each tenant's own runner
 * Lambda, with no data-plane grants (docs/sandbox.md). Code of two tenants never shares a process.
 */

/** Calls the code may make through `req.svc`; each is answered by the host, which alone holds a key. */
export const SVC_OPERATIONS = ["tokens.create", "tokens.retrieve", "tokens.update", "tokens.delete"] as const;
export type SvcOperation = (typeof SVC_OPERATIONS)[number];

/** Built-in modules the code may `require` (also as `node:<name>`), besides the packages (docs/sandbox.md). */
export const ALLOWED_MODULES = ["crypto", "util", "url", "querystring", "buffer", "string_decoder"] as const;

export interface SandboxRequest {
  tenantId: string;
  /** A CommonJS module body: `module.exports = async function (req) { ... }` (or a sync function). */
  code: string;
  /** JSON-able; parsed inside the sandbox and given to the code as `req` (plus `req.svc`). */
  input: unknown;
  /**
   * `input.args.body` is the text of a JSON document (a destination's answer): the run parses it, inside the
   * sandbox where the time is the run's (the text is kept when it is not JSON), not the process every tenant
   * shares.
   */
  parseArgsBody?: boolean;
  /**
   * Wall-clock limit for the run, svc calls and any wait for a free process included (not the start of a
   * new one); the process is killed when it passes.
   */
  timeoutMs: number;
  /** Answers `req.svc` calls; without it `req.svc` is null. Its result must be JSON-able. */
  onSvcCall?: (op: SvcOperation, args: unknown[]) => Promise<unknown>;
  /**
   * For sandboxes whose svc calls are answered remotely (the runner Lambda calls the public API): issues a
   * key for this run only, with the permissions `onSvcCall` would have. The local ProcessSandbox ignores it.
   */
  issueSvcKey?: () => Promise<string>;
  /**
   * Where the code's `fetch` may go (the formula's or proxy's `allowed_hosts`: `host`, `host:port`,
   * `*.domain`); undefined lets it reach any host the address rule allows.
   */
  allowedHosts?: readonly string[];
}

/**
 * - timeout: the run passed `timeoutMs` (the process was killed)
 * - memory: the process passed its memory limit, or the result was too large
 * - crashed: the process stopped for another reason (or was stopped because a sibling run timed out)
 * - thrown: the code threw or rejected; `name`, `message`, `status` and `body` are the code's own
 * - invalid-code: the code does not compile, throws while loading, or does not export a function
 */
export type SandboxErrorKind = "timeout" | "crashed" | "memory" | "thrown" | "invalid-code";

export interface SandboxError {
  kind: SandboxErrorKind;
  /** For every kind but `thrown` written by the sandbox: no host paths, no data. */
  message: string;
  /** `thrown` only: the error's `name`. */
  name?: string;
  /** `thrown` only: an integer `status` the code put on its error (the reactor maps it to the answer). */
  status?: number;
  /** `thrown` only: the error's JSON-able `body`. */
  body?: unknown;
  /** `thrown` only: the field messages of a typed error (`errors`), a map of string lists. */
  errors?: Record<string, string[]>;
  /** `thrown` only: the error's `headers` (a CustomHttpResponseError's), unfiltered: tenant code's. */
  headers?: Record<string, string>;
}

/**
 * `dataFrom`: the tokens whose data the code's `svc` calls handed it (an answer with `data`), by id: what the
 * code answers may hold it, so an idempotent replay of that answer is bound to those tokens as they are.
 */
export type SandboxResult = ({ ok: true; value: unknown } | { ok: false; error: SandboxError }) & {
  dataFrom?: string[];
};

export interface Sandbox {
  /**
   * Runs `code` once on `input`. Every outcome of the code (including timeouts and crashes) resolves as a
   * SandboxResult; it rejects only on a programming error (closed sandbox, input that is not JSON-able).
   */
  run(request: SandboxRequest): Promise<SandboxResult>;
  /** Starts what the first run needs ahead of time (the local pool's blank spare process). */
  warm?(): Promise<void>;
  /**
   * Called after a tenant's code is saved: readies what that tenant's runs need (in AWS, its own runner
   * function). Best effort and never rejects; a sandbox with nothing to prepare leaves it out.
   */
  prepare?(tenantId: string): Promise<void>;
  /** Stops every process; later runs reject. */
  close(): Promise<void>;
}
