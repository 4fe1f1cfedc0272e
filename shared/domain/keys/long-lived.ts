import { auditEvent } from "#shared/domain/audit-entry.ts";
import {
  configurationNeedsReseal,
  configurationProblem,
  itemTooLarge,
  openConfiguration,
  sealConfiguration,
} from "#shared/domain/crypto/sealed-configuration.ts";
import type { Sealer } from "#shared/domain/crypto/sealer.ts";
import {
  proxyConfigurationBinding,
  proxyKeyBinding,
  type StoredProxy,
} from "#shared/domain/proxies/proxy.ts";
import {
  reactorConfigurationBinding,
  type StoredReactor,
  webhookSecretBinding,
} from "#shared/domain/reactors/model.ts";
import type { Clock } from "#shared/ports/clock.ts";
import type { ProxyStore } from "#shared/ports/proxy-store.ts";
import type { ReactorStore } from "#shared/ports/reactor-store.ts";
import { sealedKeyIdOf } from "./key-refs.ts";

/**
 * The tenant's long-lived sealed values besides its tokens: each proxy's key and configuration, each reactor's
 * configuration and the webhook secret. A rewrap re-seals them under the current data key (a conditional write on
 * the value it read, so a newer one written meanwhile wins), sealing too the plain configurations of items written
 * before configurations were sealed; a data-key version is never destroyed while one of them still names it.
 */
export interface LongLivedDeps {
  proxies: Pick<ProxyStore, "list" | "get" | "reseal">;
  reactors: Pick<
    ReactorStore,
    "list" | "get" | "resealConfiguration" | "webhookSecret" | "resealWebhookSecret"
  >;
  sealer: Pick<Sealer, "seal" | "open">;
  clock: Clock;
}

/** Tries when the value changed between its read and its re-seal. */
const RESEAL_ATTEMPTS = 3;

const system = (tenantId: string) => ({ tenantId, actor: { type: "system" as const } });

/** How many long-lived sealed values of the tenant name data key `keyId`. */
export async function longLivedUnder(
  deps: Pick<LongLivedDeps, "proxies" | "reactors">,
  tenantId: string,
  keyId: string,
): Promise<number> {
  const [proxies, reactors, secret] = await Promise.all([
    deps.proxies.list(tenantId),
    deps.reactors.list<StoredReactor>("reactor", tenantId),
    deps.reactors.webhookSecret(tenantId),
  ]);
  const sealed = [
    ...proxies.flatMap((p) => [p.sealed_key, p.sealed_configuration]),
    ...reactors.map((r) => r.sealed_configuration),
    secret,
  ];
  return sealed.filter((value) => value !== undefined && sealedKeyIdOf(value) === keyId).length;
}

/** Re-seals every long-lived value of the tenant not under `currentKeyId` (a rewrap's end). */
export async function resealLongLived(
  deps: LongLivedDeps,
  tenantId: string,
  currentKeyId: string,
  note: string,
): Promise<void> {
  for (const listed of await deps.proxies.list(tenantId)) await resealProxy(deps, listed, currentKeyId, note);
  for (const listed of await deps.reactors.list<StoredReactor>("reactor", tenantId))
    await resealReactor(deps, listed, currentKeyId, note);
  for (let attempt = 0; attempt < RESEAL_ATTEMPTS; attempt++) {
    const secret = await deps.reactors.webhookSecret(tenantId);
    if (!secret || sealedKeyIdOf(secret) === currentKeyId) break;
    const binding = webhookSecretBinding(tenantId);
    const sealed = await deps.sealer.seal(binding, await deps.sealer.open(binding, secret));
    const audit = auditEvent(deps, system(tenantId), "tenant", tenantId, "update", `Webhook secret ${note}`);
    if (await deps.reactors.resealWebhookSecret(tenantId, secret, sealed, audit)) break;
  }
}

/** The proxy's key and configuration (sealed, or a plain map of an older item) sealed under the current key. */
async function resealProxy(deps: LongLivedDeps, listed: StoredProxy, currentKeyId: string, note: string) {
  let proxy: StoredProxy | undefined = listed;
  for (let attempt = 0; proxy && attempt < RESEAL_ATTEMPTS; attempt++) {
    const keyCurrent = sealedKeyIdOf(proxy.sealed_key) === currentKeyId;
    if (keyCurrent && !configurationNeedsReseal(proxy, currentKeyId)) break;
    const binding = proxyKeyBinding(proxy);
    const configurationBinding = proxyConfigurationBinding(proxy);
    const configuration = await openConfiguration(deps.sealer, configurationBinding, proxy);
    // A plain map too large to seal (merged past the bound before configurations were sealed) stays plain.
    const sealable = configuration !== undefined && !configurationProblem(configuration);
    const sealed_configuration = sealable
      ? await sealConfiguration(deps.sealer, configurationBinding, configuration)
      : undefined;
    // An older item whose code and configuration fit as a map but not sealed stays plain too.
    const fits =
      !sealed_configuration || !itemTooLarge({ ...proxy, configuration: undefined, sealed_configuration });
    const next = {
      sealed_key: await deps.sealer.seal(binding, await deps.sealer.open(binding, proxy.sealed_key)),
      ...(sealed_configuration !== undefined && fits ? { sealed_configuration } : {}),
    };
    const what = !(sealed_configuration && fits) ? "Proxy key" : "Proxy key and configuration";
    const audit = auditEvent(deps, system(proxy.tenant_id), "proxy", proxy.id, "update", `${what} ${note}`);
    if (await deps.proxies.reseal(proxy, next, audit)) break;
    proxy = await deps.proxies.get(proxy.tenant_id, proxy.id);
  }
}

/** The reactor's configuration (sealed, or a plain map of an older item) sealed under the current key. */
async function resealReactor(deps: LongLivedDeps, listed: StoredReactor, currentKeyId: string, note: string) {
  let reactor: StoredReactor | undefined = listed;
  for (let attempt = 0; reactor && attempt < RESEAL_ATTEMPTS; attempt++) {
    if (!configurationNeedsReseal(reactor, currentKeyId)) break;
    const binding = reactorConfigurationBinding(reactor);
    const configuration = (await openConfiguration(deps.sealer, binding, reactor)) ?? {};
    if (configurationProblem(configuration)) break; // a plain map too large to seal (as for proxies) stays plain
    const sealed = await sealConfiguration(deps.sealer, binding, configuration);
    if (itemTooLarge({ ...reactor, configuration: undefined, sealed_configuration: sealed })) break; // stays plain
    const audit = auditEvent(
      deps,
      system(reactor.tenant_id),
      "reactor",
      reactor.id,
      "update",
      `Reactor configuration ${note}`,
    );
    if (await deps.reactors.resealConfiguration(reactor, sealed, audit)) break;
    reactor = await deps.reactors.get<StoredReactor>("reactor", reactor.tenant_id, reactor.id);
  }
}
