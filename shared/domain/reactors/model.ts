import * as sealed from "#shared/domain/crypto/sealed-configuration.ts";
import type { Sealer } from "#shared/domain/crypto/sealer.ts";
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

/**
 * A reactor as stored: its configuration only sealed (`sealed_configuration`; a plain `configuration` only on items
 * written before that, crypto/sealed-configuration.ts).
 */
export interface StoredReactor extends sealed.ConfigurationAtRest {
  id: string;
  tenant_id: string;
  name: string;
  /** The formula it runs; a reactor runs a formula or its own `code`, never both. */
  formula_id?: string;
  /** Its own code (the hosted vault's current shape): run with every arg, as a formula without parameters. */
  code?: string;
  application_id?: string;
  created_by?: string;
  created_at: string;
  modified_by?: string;
  modified_at?: string;
}

/** What is written: never a plain configuration. */
export type ReactorToStore = StoredReactor & { configuration?: never };

/** A reactor with its configuration opened: what the use cases work with, never stored as it is. */
export type OpenedReactor = Omit<StoredReactor, "configuration" | "sealed_configuration"> & {
  configuration: Record<string, unknown>;
};

/** What a reactor's sealed configuration is bound to: its tenant, its id and the field. */
export const reactorConfigurationBinding = (reactor: Pick<StoredReactor, "tenant_id" | "id">) =>
  sealed.configurationBinding("reactor", reactor.tenant_id, reactor.id);

export async function openReactor(
  sealer: Pick<Sealer, "open">,
  reactor: StoredReactor,
): Promise<OpenedReactor> {
  const { sealed_configuration: _sealed, configuration: _plain, ...fields } = reactor;
  const configuration = await sealed.openConfiguration(sealer, reactorConfigurationBinding(reactor), reactor);
  return { ...fields, configuration: configuration ?? {} };
}

export async function sealReactor(
  sealer: Pick<Sealer, "seal">,
  reactor: OpenedReactor,
): Promise<ReactorToStore> {
  const { configuration, ...fields } = reactor;
  return sealed.sealForStore(sealer, "reactor", reactorConfigurationBinding(reactor), fields, configuration);
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
  reactor: Pick<StoredReactor, "code" | "modified_by" | "modified_at" | "created_at">,
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
