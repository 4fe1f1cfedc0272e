import { Cache } from "#shared/domain/cache.ts";
import type { Clock } from "#shared/ports/clock.ts";
import type { KeyState, KeyVersionStore } from "#shared/ports/key-versions.ts";
import type { KeyVersionSource } from "../crypto/keyring.ts";

/** How long a process trusts the key versions it read: a rotation reaches other warm processes within this. */
export const KEY_STATE_CACHE_SECONDS = 5;

/** The keyring's view of each tenant's key versions: one read per tenant per few seconds, evicted on change. */
export class KeyStateCache implements KeyVersionSource {
  private readonly cache: Cache<KeyState>;

  constructor(
    private readonly store: Pick<KeyVersionStore, "state" | "track">,
    private readonly clock: Clock,
    seconds = KEY_STATE_CACHE_SECONDS,
  ) {
    this.cache = new Cache<KeyState>({ ttlMs: seconds * 1000 });
  }

  /** The state still cached, without a lookup (or undefined): the keyring asks several times a request. */
  cachedState(tenantId: string): KeyState | undefined {
    return this.cache.peek(tenantId, this.clock.now().getTime());
  }

  async state(tenantId: string): Promise<KeyState> {
    const state = await this.cache.get(tenantId, this.clock.now().getTime(), () =>
      this.store.state(tenantId),
    );
    return state as KeyState;
  }

  track(tenantId: string, keyId: string): Promise<void> {
    return this.store.track(tenantId, keyId, this.clock.now());
  }

  /** After this process changed the tenant's versions: its next seal reads them again. */
  evict(tenantId: string): void {
    this.cache.evict(tenantId);
  }
}
