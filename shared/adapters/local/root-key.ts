import { digestsEqual } from "#shared/ids.ts";
import type { RootKeyVerifier } from "#shared/ports/root-key.ts";

/** Root key hash held in memory (local mode: from SVC_ROOT_KEY or SVC_ROOT_KEY_HASH). */
export class StaticRootKeyVerifier implements RootKeyVerifier {
  constructor(private readonly rootKeyHash: string | undefined) {}

  async isRootKey(keyHash: string): Promise<boolean> {
    return this.rootKeyHash !== undefined && digestsEqual(keyHash, this.rootKeyHash);
  }
}
