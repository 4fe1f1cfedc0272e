/** A tenant with one reactor per formula code, for the sandbox pool attack tests (not a test file itself). */
import { existsSync } from "node:fs";
import { expect } from "vitest";
import type { ProcessSandbox } from "#shared/sandbox/pool.ts";
import { type Client, createTenant } from "#test/support/http.ts";
import type { TestService } from "#test/support/service.ts";

export interface ReactorTenant {
  tenantId: string;
  /** A key holding token:use, to react with. */
  user: string;
  /** Reactor ids, in the order of the codes given. */
  reactors: string[];
}

export async function reactorTenant(api: Client, rootKey: string, codes: string[]): Promise<ReactorTenant> {
  const tenant = await createTenant(api, rootKey);
  const app = await api.post<{ id: string; key: string }>("/applications", {
    key: tenant.managementKey,
    body: { name: "reactor app", type: "private", permissions: ["token:use"] },
  });
  expect(app.status, JSON.stringify(app.body)).toBe(201);
  const reactors: string[] = [];
  for (const [i, code] of codes.entries()) {
    const formula = await api.post<{ id: string }>("/reactor-formulas", {
      key: tenant.managementKey,
      body: { name: `formula ${i}`, code, configuration: [], request_parameters: [] },
    });
    expect(formula.status, JSON.stringify(formula.body)).toBe(201);
    const reactor = await api.post<{ id: string }>("/reactors", {
      key: tenant.managementKey,
      body: {
        name: `reactor ${i}`,
        formula: { id: formula.body.id },
        configuration: {},
        application: { id: app.body.id },
      },
    });
    expect(reactor.status, JSON.stringify(reactor.body)).toBe(201);
    reactors.push(reactor.body.id);
  }
  return { tenantId: tenant.tenantId, user: app.body.key, reactors };
}

export function react(api: Client, tenant: ReactorTenant, index = 0) {
  return api.post<{ raw?: unknown }>(`/reactors/${tenant.reactors[index]}/react`, {
    key: tenant.user,
    body: { args: {} },
  });
}

/** The pid of the local sandbox process serving a formula's code, if one is alive. */
export function pidOf(svc: TestService, tenantId: string, code: string): number | undefined {
  const sandbox = svc.service.deps.sandbox.inner as ProcessSandbox;
  return sandbox.pidOf(tenantId, code);
}

export const processExists = (pid: number) => existsSync(`/proc/${pid}`);

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
