import { auditEvent } from "#shared/domain/audit-entry.ts";
import type { Sealer } from "#shared/domain/crypto/sealer.ts";
import { proxyKeyBinding, type StoredProxy } from "#shared/domain/proxies/proxy.ts";
import { webhookSecretBinding } from "#shared/domain/reactors/model.ts";
import type { Clock } from "#shared/ports/clock.ts";
import type { ProxyStore } from "#shared/ports/proxy-store.ts";
import type { ReactorStore } from "#shared/ports/reactor-store.ts";
import { sealedKeyIdOf } from "./key-refs.ts";

/**
 * The tenant's long-lived sealed values besides its tokens: each proxy's key and the webhook secret. A rewrap
 * re-seals them under the current data key (a conditional write on the sealed value it read, so a newer one
 * written meanwhile wins), and a data-key version is never destroyed while one of them still names it.
 */
export interface LongLivedDeps {
  proxies: Pick<ProxyStore, "list" | "get" | "reseal">;
  reactors: Pick<ReactorStore, "webhookSecret" | "resealWebhookSecret">;
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
  const [proxies, secret] = await Promise.all([
    deps.proxies.list(tenantId),
    deps.reactors.webhookSecret(tenantId),
  ]);
  const sealed = [...proxies.map((p) => p.sealed_key), ...(secret ? [secret] : [])];
  return sealed.filter((value) => sealedKeyIdOf(value) === keyId).length;
}

/** Re-seals every long-lived value of the tenant not under `currentKeyId` (a rewrap's end). */
export async function resealLongLived(
  deps: LongLivedDeps,
  tenantId: string,
  currentKeyId: string,
  note: string,
): Promise<void> {
  for (const listed of await deps.proxies.list(tenantId)) {
    let proxy: StoredProxy | undefined = listed;
    for (let attempt = 0; proxy && attempt < RESEAL_ATTEMPTS; attempt++) {
      if (sealedKeyIdOf(proxy.sealed_key) === currentKeyId) break;
      const binding = proxyKeyBinding(proxy);
      const sealed = await deps.sealer.seal(binding, await deps.sealer.open(binding, proxy.sealed_key));
      const audit = auditEvent(deps, system(tenantId), "proxy", proxy.id, "update", `Proxy key ${note}`);
      if (await deps.proxies.reseal(proxy, sealed, audit)) break;
      proxy = await deps.proxies.get(tenantId, proxy.id);
    }
  }
  for (let attempt = 0; attempt < RESEAL_ATTEMPTS; attempt++) {
    const secret = await deps.reactors.webhookSecret(tenantId);
    if (!secret || sealedKeyIdOf(secret) === currentKeyId) break;
    const binding = webhookSecretBinding(tenantId);
    const sealed = await deps.sealer.seal(binding, await deps.sealer.open(binding, secret));
    const audit = auditEvent(deps, system(tenantId), "tenant", tenantId, "update", `Webhook secret ${note}`);
    if (await deps.reactors.resealWebhookSecret(tenantId, secret, sealed, audit)) break;
  }
}
