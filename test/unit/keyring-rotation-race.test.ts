import { randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { MasterKeyWrapper } from "#shared/adapters/local/master-key-wrapper.ts";
import { MemoryDataKeyStore } from "#shared/adapters/memory/data-key-store.ts";
import { Keyring, MissingKeyError } from "#shared/domain/crypto/keyring.ts";
import type { KeyState } from "#shared/ports/key-versions.ts";

const clock = { now: () => new Date("2026-11-26T12:00:00Z") };

/** A tenant whose key state is `states[0]` on the first read, `states[1]` on the next, and so on. */
function keyringReading(...states: KeyState[]) {
  let reads = 0;
  const versions = {
    state: async () => states[Math.min(reads++, states.length - 1)] as KeyState,
    track: async () => undefined,
  };
  return new Keyring(
    new MasterKeyWrapper(randomBytes(32)),
    new MemoryDataKeyStore(),
    clock,
    undefined,
    undefined,
    versions,
  );
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
});
