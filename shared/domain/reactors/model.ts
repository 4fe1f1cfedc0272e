import type { RequestParameter } from "./args.ts";

export type ConfigurationType = "string" | "number" | "boolean";

export interface StoredFormula {
  id: string;
  tenant_id: string;
  name: string;
  description?: string;
  type: "private";
  code: string;
  configuration: { name: string; type: ConfigurationType; description?: string }[];
  request_parameters: RequestParameter[];
  /** Where the code's `fetch` may go (docs/reactors.md); absent: anywhere the address rule allows. */
  allowed_hosts?: string[];
  created_by?: string;
  created_at: string;
  modified_by?: string;
  modified_at?: string;
}

export interface StoredReactor {
  id: string;
  tenant_id: string;
  name: string;
  /** The formula it runs; a reactor runs a formula or its own `code`, never both. */
  formula_id?: string;
  /** Its own code (the hosted vault's current shape): run with every arg, as a formula without parameters. */
  code?: string;
  configuration: Record<string, unknown>;
  application_id?: string;
  created_by?: string;
  created_at: string;
  modified_by?: string;
  modified_at?: string;
}

/** What a run executes: a formula's code and rules, or a reactor's own code. */
export interface RunnableCode {
  code: string;
  request_parameters: RequestParameter[];
  allowed_hosts?: string[];
  /** Who last changed the code, and when (a reactor's own code: the reactor's last change). */
  modified_by?: string;
  modified_at?: string;
}

/** The code `reactor` runs: its own, or its formula's (undefined when the formula is gone). */
export function runnableOf(
  reactor: StoredReactor,
  formula: StoredFormula | undefined,
): RunnableCode | undefined {
  if (reactor.code !== undefined)
    return {
      code: reactor.code,
      request_parameters: [],
      ...(reactor.modified_by ? { modified_by: reactor.modified_by } : {}),
      modified_at: reactor.modified_at ?? reactor.created_at,
    };
  return formula;
}

/** What the tenant's sealed webhook secret is bound to. */
export const webhookSecretBinding = (tenantId: string) => ({
  tenantId,
  tokenId: "webhook",
  field: "webhook_secret",
});
