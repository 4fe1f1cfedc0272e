import { auditEvent } from "#shared/domain/audit-entry.ts";
import { hmacKeyId } from "./key-refs.ts";
import { currentKeys, type KeyDeps } from "./key-versions.ts";

/** Tries when the key state changed under a retirement (a rotation meanwhile). */
const RETIRE_ATTEMPTS = 3;

/**
 * After a rewrap: each earlier HMAC version no token needs (counted from its start, count 0) is no longer looked
 * up, and its key is destroyed in the same write. Version 1's key stays: it also keys the request signatures of
 * idempotent requests and the logged search-query digests, which must compare across rotations (sealer.ts).
 */
export async function retireHmacVersions(deps: KeyDeps, tenantId: string, jobId: string): Promise<void> {
  for (let attempt = 0; attempt < RETIRE_ATTEMPTS; attempt++) {
    const { state, records } = await currentKeys(deps, tenantId);
    const unused = state.hmacLive.filter((version) => {
      if (version === state.hmacVersion) return false;
      const record = records.find((r) => r.keyId === hmacKeyId(version));
      return record?.tracked === true && record.tokens === 0;
    });
    const [version] = unused;
    if (version === undefined) return;
    const to = {
      ...state,
      hmacLive: state.hmacLive.filter((v) => v !== version),
      revision: state.revision + 1,
    };
    const audit = auditEvent(
      deps,
      { tenantId, actor: { type: "system" } },
      "tenant_key",
      hmacKeyId(version),
      "delete",
      `HMAC version ${version} retired after rewrap ${jobId}: no token needs it`,
    );
    const now = deps.clock.now();
    const done =
      version === 1
        ? await deps.keyVersions.rotate(tenantId, state, to, [], audit, now)
        : (await deps.keyVersions.destroy(tenantId, hmacKeyId(version), audit, now, { from: state, to })) ===
          "destroyed";
    deps.keyState.evict(tenantId);
    // Retired: on to the next one, if any (a fresh read of the state).
    if (done) attempt = -1;
  }
}
