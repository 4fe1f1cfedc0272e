import type { RunnerEvent } from "#shared/adapters/aws/lambda-sandbox.ts";
import "#shared/http/safe-headers.ts"; // it makes HTTP calls: no `__proto__` header line crashes it
import type { SandboxResult, SvcOperation } from "#shared/ports/sandbox.ts";
import { withArgsBodyDecoded } from "#shared/sandbox/args-body.ts";
import { ProcessSandbox } from "#shared/sandbox/pool.ts";

/**
 * A tenant's runner Lambda (one function per tenant, created by the control plane from this bundle): no
 * grants, nothing secret in its environment. It runs the tenant's code in child processes (one per code
 * version), and answers `svc` calls through the public API with the short-lived key the caller gave for this run.
 */
// The code's fetch is carried out here (the child processes have no network): https and public addresses
// only, as every outbound call in AWS (docs/security.md#network-egress).
const sandbox = new ProcessSandbox({ outbound: { allowPrivate: false, requireHttps: true } });
// Start the blank spare during init, so a new tenant's first run does not pay Node's start-up.
await sandbox.warm();

async function callApi(
  svc: { baseUrl: string; apiKey: string },
  op: SvcOperation,
  args: unknown[],
): Promise<unknown> {
  const given = String(args[0] ?? "");
  // "", "." and ".." are no token's id, and in a URL path they name another route (/tokens/, the API's root).
  if (op !== "tokens.create" && (given === "" || given === "." || given === ".."))
    throw Object.assign(new Error("The token does not exist."), { status: 404 });
  const id = encodeURIComponent(given);
  const request: Record<SvcOperation, { method: string; path: string; body?: unknown; type?: string }> = {
    "tokens.create": { method: "POST", path: "/tokens", body: args[0] },
    "tokens.retrieve": { method: "GET", path: `/tokens/${id}` },
    "tokens.update": {
      method: "PATCH",
      path: `/tokens/${id}`,
      body: args[1],
      type: "application/merge-patch+json",
    },
    "tokens.delete": { method: "DELETE", path: `/tokens/${id}` },
  };
  const call = request[op];
  const response = await fetch(`${svc.baseUrl.replace(/\/$/, "")}${call.path}`, {
    method: call.method,
    headers: {
      "svc-api-key": svc.apiKey,
      ...(call.body !== undefined ? { "content-type": call.type ?? "application/json" } : {}),
    },
    ...(call.body !== undefined ? { body: JSON.stringify(call.body) } : {}),
    signal: AbortSignal.timeout(10_000),
  });
  const text = await response.text();
  const body: unknown = text ? JSON.parse(text) : null;
  if (!response.ok) {
    const detail = (body as { detail?: string } | null)?.detail ?? `svc call failed with ${response.status}`;
    throw Object.assign(new Error(detail), { status: response.status });
  }
  return body;
}

export const handler = async (event: RunnerEvent): Promise<SandboxResult> =>
  sandbox.run({
    tenantId: event.tenantId,
    code: event.code,
    input: event.argsBodyBase64 ? withArgsBodyDecoded(event.input) : event.input,
    ...(event.parseArgsBody ? { parseArgsBody: true } : {}),
    timeoutMs: event.timeoutMs,
    ...(event.outbound?.allowedHosts ? { allowedHosts: event.outbound.allowedHosts } : {}),
    ...(event.outbound?.limits ? { outboundLimits: event.outbound.limits } : {}),
    ...(event.svc
      ? { onSvcCall: (op, args) => callApi(event.svc as NonNullable<RunnerEvent["svc"]>, op, args) }
      : {}),
  });

/** Stops the runner's sandbox processes (tests; Lambda just freezes or ends the environment). */
export const closeSandbox = (): Promise<void> => sandbox.close();
