import { expect } from "vitest";
import { type Client, client, createTenant } from "./http.ts";
import { appKey, application } from "./tokens.ts";

export interface NewReactor {
  api: Client;
  tenant: Awaited<ReturnType<typeof createTenant>>;
  /** The private application the reactor runs as (its key calls react). */
  app: { id: string; key: string };
  reactorId: string;
}

/**
 * A new tenant, a private application holding `permissions`, a formula (`formula`: its body, name and code at
 * least) and a reactor of it running as that application, with `configuration`.
 */
export async function createReactor(
  svc: { url: string; rootKey: string },
  options: {
    formula: Record<string, unknown> & { name: string; code: string };
    permissions: string[];
    /** Access rules instead of plain permissions (which read masked). */
    rules?: unknown[];
    configuration?: Record<string, string>;
    reactorName?: string;
  },
): Promise<NewReactor> {
  const api = client(svc.url);
  const tenant = await createTenant(api, svc.rootKey);
  const app = await api.post<{ id: string; key: string }>("/applications", {
    key: tenant.managementKey,
    body: {
      name: "reactor app",
      type: "private",
      ...(options.rules ? { rules: options.rules } : { permissions: options.permissions }),
    },
  });
  expect(app.status, JSON.stringify(app.body)).toBe(201);
  const reactorId = await formulaReactor(api, tenant.managementKey, {
    formula: options.formula,
    applicationId: app.body.id,
    ...(options.reactorName !== undefined ? { name: options.reactorName } : {}),
    ...(options.configuration !== undefined ? { configuration: options.configuration } : {}),
  });
  return { api, tenant, app: app.body, reactorId };
}

/**
 * In an existing tenant: a formula (`formula`: its body, name and code at least) and a reactor of it acting as
 * the application `applicationId`, with `configuration`. Answers the reactor's id.
 */
export async function formulaReactor(
  api: Client,
  managementKey: string,
  options: {
    formula: Record<string, unknown> & { name: string; code: string };
    applicationId: string;
    name?: string;
    configuration?: Record<string, string>;
  },
): Promise<string> {
  const formula = await api.post<{ id: string }>("/reactor-formulas", {
    key: managementKey,
    body: options.formula,
  });
  expect(formula.status, JSON.stringify(formula.body)).toBe(201);
  const reactor = await api.post<{ id: string }>("/reactors", {
    key: managementKey,
    body: {
      name: options.name ?? options.formula.name,
      formula: { id: formula.body.id },
      configuration: options.configuration ?? {},
      application: { id: options.applicationId },
    },
  });
  expect(reactor.status, JSON.stringify(reactor.body)).toBe(201);
  return reactor.body.id;
}

/** Polls a react-async result until it exists (the local queue runs it in the background). */
export async function reactionResult(api: Client, key: string, reactorId: string, requestId: string) {
  for (let i = 0; i < 300; i += 1) {
    const res = await api.get(`/reactors/${reactorId}/results/${requestId}`, { key });
    if (res.status !== 404) return res;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error("no result");
}

/** An application that may create and reveal every token of its tenant: what a reactor creating cards acts as. */
export const revealingReactorApp = (api: Client, managementKey: string) =>
  application(api, managementKey, {
    name: "reactor app",
    type: "private",
    rules: [
      { priority: 1, container: "/", transform: "reveal", permissions: ["token:create", "token:read"] },
    ],
  });

/**
 * A new tenant with a revealing reactor application (`acting`) and a private caller whose one rule reveals every
 * container with `permissions`: the set-up of a reaction a back end asks for and reads.
 */
export async function reactingTenant(svc: { url: string; rootKey: string }, permissions: string[]) {
  const api = client(svc.url);
  const { managementKey } = await createTenant(api, svc.rootKey);
  const acting = await revealingReactorApp(api, managementKey);
  const caller = await appKey(api, managementKey, {
    type: "private",
    rules: [{ priority: 1, container: "/", transform: "reveal", permissions }],
  });
  return { api, managementKey, acting, caller };
}

/**
 * A reactor of inline `code` acting as `actingId`, asked once through react-async by `caller`: its result once
 * the local queue has run it.
 */
export async function reactedAsync(
  api: Client,
  managementKey: string,
  options: { actingId: string; caller: string; code: string },
) {
  const reactor = await api.post<{ id: string }>("/reactors", {
    key: managementKey,
    body: { name: "issuer", code: options.code, application: { id: options.actingId } },
  });
  expect(reactor.status, JSON.stringify(reactor.body)).toBe(201);
  const accepted = await api.post<{ asyncReactorRequestId: string }>(
    `/reactors/${reactor.body.id}/react-async`,
    {
      key: options.caller,
      body: { args: {} },
    },
  );
  expect(accepted.status).toBe(202);
  const requestId = accepted.body.asyncReactorRequestId;
  const result = await reactionResult(api, options.caller, reactor.body.id, requestId);
  return { reactorId: reactor.body.id, requestId, result };
}
