import { auditEvent, recordEvents } from "#shared/domain/audit-entry.ts";
import type { Keyring } from "#shared/domain/crypto/keyring.ts";
import { unframe } from "#shared/domain/crypto/tenant-key-wrapper.ts";
import type { TenantPrincipal } from "#shared/domain/entities.ts";
import { conflict, notFound } from "#shared/domain/errors.ts";
import type { Clock } from "#shared/ports/clock.ts";
import type { KeyCustodyStore } from "#shared/ports/customer-keys.ts";
import type { KeyState, KeyVersionRecord, KeyVersionStore } from "#shared/ports/key-versions.ts";
import type { AuditLogStore } from "#shared/ports/stores.ts";
import { destroyableFrom } from "./destroy-window.ts";
import { dataKeyId, dataVersionOf, hmacKeyId, hmacVersionOfKeyId } from "./key-refs.ts";
import { type LongLivedDeps, longLivedUnder } from "./long-lived.ts";

export interface KeyDeps {
  keyVersions: KeyVersionStore;
  keyState: { evict(tenantId: string): void };
  keyring: Pick<Keyring, "currentVersion" | "periodStart" | "periodVersion">;
  auditLog: AuditLogStore;
  clock: Clock;
}

export type KeyVersionState = "current" | "active" | "destroyed";

export interface KeyVersionView {
  version: number;
  created_at?: string;
  state: KeyVersionState;
  /** Tokens that need this version; null when its tokens were written before counting existed. */
  tokens: number | null;
}

export interface KeysView {
  current: number;
  versions: KeyVersionView[];
  /** The fingerprint and search-index HMAC versions: an older one is looked up until no token needs it. */
  hmac: { current: number; versions: KeyVersionView[] };
  /**
   * Once the tenant brought its own KMS key: that key, and how many of its data and HMAC keys are still wrapped
   * under the deployment's key or an earlier key of its own (a move cut short: the PUT sent again finishes it).
   */
  custody?: { key_arn: string; keys_not_moved: number };
}

/** The tenant's key versions, read fresh (this process's cache of them dropped first). */
export async function currentKeys(deps: KeyDeps, tenantId: string) {
  deps.keyState.evict(tenantId);
  const [state, dataVersion, records] = await Promise.all([
    deps.keyVersions.state(tenantId),
    deps.keyring.currentVersion(tenantId),
    deps.keyVersions.versions(tenantId),
  ]);
  return { state, dataVersion, records };
}

function view(version: number, record: KeyVersionRecord | undefined, state: KeyVersionState): KeyVersionView {
  return {
    version,
    ...(record?.createdAt ? { created_at: record.createdAt } : {}),
    state,
    tokens: record && !record.tracked ? null : (record?.tokens ?? 0),
  };
}

export function keysView(state: KeyState, dataVersion: number, records: KeyVersionRecord[]): KeysView {
  const data = new Map<number, KeyVersionRecord>();
  const hmac = new Map<number, KeyVersionRecord>();
  for (const record of records) {
    const d = dataVersionOf(record.keyId);
    if (d !== undefined) data.set(d, record);
    const h = hmacVersionOfKeyId(record.keyId);
    if (h !== undefined) hmac.set(h, record);
  }
  const versions = [...new Set([dataVersion, ...data.keys()])]
    .sort((a, b) => b - a)
    .map((v) => {
      const record = data.get(v);
      return view(v, record, v === dataVersion ? "current" : record?.destroyedAt ? "destroyed" : "active");
    });
  const hmacVersions = [...new Set([state.hmacVersion, ...hmac.keys()])]
    .sort((a, b) => b - a)
    .map((v) =>
      view(
        v,
        hmac.get(v),
        v === state.hmacVersion ? "current" : state.hmacLive.includes(v) ? "active" : "destroyed",
      ),
    );
  return { current: dataVersion, versions, hmac: { current: state.hmacVersion, versions: hmacVersions } };
}

/** Where the tenant's keys are wrapped, once it brought its own KMS key (undefined before). */
async function custodyView(
  custody: Pick<KeyCustodyStore, "customerKey" | "wrappedKeys">,
  tenantId: string,
): Promise<KeysView["custody"]> {
  const keyArn = await custody.customerKey(tenantId);
  if (!keyArn) return undefined;
  const wrapped = await custody.wrappedKeys(tenantId);
  const notMoved = wrapped.filter((key) => unframe(key.wrapped).keyArn !== keyArn).length;
  return { key_arn: keyArn, keys_not_moved: notMoved };
}

/** GET /tenants/self/keys. */
export async function listKeys(
  deps: KeyDeps & { custody: Pick<KeyCustodyStore, "customerKey" | "wrappedKeys"> },
  principal: TenantPrincipal,
): Promise<KeysView> {
  const [{ state, dataVersion, records }, custody] = await Promise.all([
    currentKeys(deps, principal.tenantId),
    custodyView(deps.custody, principal.tenantId),
  ]);
  await recordEvents(deps, [auditEvent(deps, principal, "tenant_key", "keys", "read", "Key versions read")]);
  return { ...keysView(state, dataVersion, records), ...(custody ? { custody } : {}) };
}

/**
 * HMAC versions a tenant may have live at once. Every fingerprint and search lookup tries each live version (a
 * read each), so rotations without a rewrap between them are bounded (security.md, key rotation).
 */
export const MAX_LIVE_HMAC_VERSIONS = 3;

/**
 * POST /tenants/self/keys/rotate: a new data-key version and a new HMAC version, current at once (in this
 * process; in others within KEY_STATE_CACHE_SECONDS). Older versions keep opening and matching what they sealed
 * and hashed until a rewrap moves every token on.
 */
export async function rotateKeys(deps: KeyDeps, principal: TenantPrincipal): Promise<KeysView> {
  const { tenantId } = principal;
  const { state, dataVersion } = await currentKeys(deps, tenantId);
  if (state.hmacLive.length >= MAX_LIVE_HMAC_VERSIONS)
    throw conflict(
      `${state.hmacLive.length} HMAC versions are still looked up: run a rewrap (POST /tenants/self/keys/rewrap), which retires those no token needs, before rotating again.`,
    );
  const nextData = dataVersion + 1;
  const nextHmac = state.hmacVersion + 1;
  const to: KeyState = {
    dataVersion: nextData,
    rotatedInPeriod: deps.keyring.periodVersion(),
    hmacVersion: nextHmac,
    hmacLive: [nextHmac, ...state.hmacLive],
    revision: state.revision + 1,
  };
  const rotated = await deps.keyVersions.rotate(
    tenantId,
    state,
    to,
    [dataKeyId(nextData), hmacKeyId(nextHmac)],
    auditEvent(
      deps,
      principal,
      "tenant_key",
      dataKeyId(nextData),
      "create",
      `Keys rotated: data-key version ${nextData} and HMAC version ${nextHmac} are current`,
    ),
    deps.clock.now(),
  );
  if (!rotated) throw conflict("The keys changed meanwhile (another rotation); retry.");
  deps.keyState.evict(tenantId);
  const fresh = await currentKeys(deps, tenantId);
  return keysView(fresh.state, fresh.dataVersion, fresh.records);
}

/**
 * DELETE /tenants/self/keys/{version}: destroys a data-key version nothing stored needs: no token (its counters),
 * no proxy key or configuration, reactor configuration nor webhook secret (a rewrap re-seals them), and no
 * short-lived sealed value (idempotent answers, react-async outcomes), which are never re-sealed but outlived
 * (destroy-window.ts).
 */
export async function destroyKeyVersion(
  deps: KeyDeps & Pick<LongLivedDeps, "proxies" | "reactors">,
  principal: TenantPrincipal,
  version: number,
): Promise<void> {
  const { tenantId } = principal;
  const { dataVersion, records } = await currentKeys(deps, tenantId);
  if (version === dataVersion) throw conflict("The current key version cannot be destroyed; rotate first.");
  if (version > dataVersion) throw notFound("The key version");
  const keyId = dataKeyId(version);
  const from = destroyableFrom(version, records, (v) => deps.keyring.periodStart(v));
  if (deps.clock.now() < from && !records.find((r) => r.keyId === keyId)?.destroyedAt)
    throw conflict(
      `Answers kept for a while (idempotent replays, react-async results) may still be sealed under key version ${version}; it can be destroyed from ${from.toISOString()}.`,
    );
  if ((await longLivedUnder(deps, tenantId, keyId)) > 0)
    throw conflict(
      "Proxy keys, proxy or reactor configurations or the webhook secret are still sealed under this key version; run a rewrap (POST /tenants/self/keys/rewrap) first.",
    );
  const outcome = await deps.keyVersions.destroy(
    tenantId,
    keyId,
    auditEvent(deps, principal, "tenant_key", keyId, "delete", `Data-key version ${version} destroyed`),
    deps.clock.now(),
  );
  if (outcome === "not-found" || outcome === "changed") throw notFound("The key version");
  if (outcome === "in-use")
    throw conflict(
      "Tokens still need this key version; run a rewrap (POST /tenants/self/keys/rewrap) first.",
    );
  if (outcome === "uncounted")
    throw conflict("This key version predates token counting, so no count proves it unused; it is kept.");
}
