import { randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { MasterKeyWrapper } from "#shared/adapters/local/master-key-wrapper.ts";
import { MemoryDataKeyStore } from "#shared/adapters/memory/data-key-store.ts";
import { Keyring, MissingKeyError } from "#shared/domain/crypto/keyring.ts";
import { Sealer } from "#shared/domain/crypto/sealer.ts";
import { earlierFingerprints, liveSearchHashes } from "#shared/domain/keys/dual-lookup.ts";
import type { KeyState } from "#shared/ports/key-versions.ts";

const clock = { now: () => new Date("2026-11-26T12:00:00Z") };

/** Wrapped keys in memory whose reads wait, while `held`, until `release` (a load kept in flight). */
class GatedKeyStore extends MemoryDataKeyStore {
  readonly made: string[] = [];
  private gate: Promise<void> | undefined;
  private open: (() => void) | undefined;

  hold(): void {
    this.gate = new Promise((resolve) => {
      this.open = resolve;
    });
  }

  release(): void {
    this.open?.();
    this.gate = undefined;
  }

  override async get(tenantId: string, keyId: string): Promise<Buffer | undefined> {
    await this.gate;
    return super.get(tenantId, keyId);
  }

  override async putIfAbsent(tenantId: string, keyId: string, wrapped: Buffer): Promise<Buffer> {
    this.made.push(keyId);
    return super.putIfAbsent(tenantId, keyId, wrapped);
  }
}

/** A tenant whose key state is `states[0]` on the first read, `states[1]` on the next, and so on. */
function keyringReading(...states: KeyState[]) {
  return keyringOver(new MemoryDataKeyStore(), ...states);
}

function keyringOver(store: MemoryDataKeyStore, ...states: KeyState[]) {
  let reads = 0;
  const versions = {
    state: async () => states[Math.min(reads++, states.length - 1)] as KeyState,
    track: async () => undefined,
  };
  return new Keyring(new MasterKeyWrapper(randomBytes(32)), store, clock, undefined, undefined, versions);
}

describe("HMAC keys under a rotation", () => {
  it("a version read as current still gets its key after a rotation made a newer one current (was a 500)", async () => {
    // The fuzz's POST /tokenize racing POST /tenants/self/keys/rotate: the create read version 2 as current, the
    // rotation then made 3 current before the create asked for version 2's key, which no token had used yet.
    const keyring = keyringReading(
      { hmacVersion: 2, hmacLive: [2, 1], revision: 1 },
      { hmacVersion: 3, hmacLive: [3, 2, 1], revision: 2 },
    );
    const { current } = await keyring.hmacVersions("tenant-a");

    const key = await keyring.hmacKey("tenant-a", current);

    expect(current).toBe(2);
    expect(key).toHaveLength(32);
  });

  it("a version no longer live is never made: its key is missing", async () => {
    const keyring = keyringReading({ hmacVersion: 3, hmacLive: [3], revision: 4 });

    await expect(keyring.hmacKey("tenant-a", 2)).rejects.toBeInstanceOf(MissingKeyError);
  });

  it("a lookup under an earlier version never makes its key: no token is hashed under a key not made", async () => {
    // Rotated from 2 to 3 before anything was hashed under 2: version 2 is live (until a rewrap) but keyless.
    const store = new GatedKeyStore();
    const sealer = new Sealer(keyringOver(store, { hmacVersion: 3, hmacLive: [3, 2], revision: 2 }));

    const earlier = await earlierFingerprints({ sealer }, "tenant-a", "token", "{{ data }}", "a value");
    const searched = await liveSearchHashes({ sealer }, "tenant-a", "a value");

    expect(earlier).toEqual([]);
    // The current version's hashes only; its key is the one made (as a write would).
    expect(searched.length).toBeGreaterThan(0);
    expect(store.made).toEqual(["hmac3"]);
  });

  it("a write that joins an earlier-version lookup of the same key in flight still gets its key made", async () => {
    const store = new GatedKeyStore();
    const keyring = keyringOver(store, { hmacVersion: 3, hmacLive: [3, 2], revision: 2 });
    store.hold();

    // The write read version 2 as current just before a rotation (the first test above); the lookup tries it as
    // an earlier version.
    const lookup = keyring.hmacKey("tenant-a", 2, { existingOnly: true });
    const write = keyring.hmacKey("tenant-a", 2);
    await new Promise((resolve) => setImmediate(resolve));
    store.release();

    await expect(lookup).rejects.toBeInstanceOf(MissingKeyError);
    expect(await write).toHaveLength(32);
    expect(store.made).toEqual(["hmac2"]);
  });
});
