import { GetParameterCommand, type SSMClient } from "@aws-sdk/client-ssm";
import { Cache } from "#shared/domain/cache.ts";
import { digestsEqual } from "#shared/ids.ts";
import type { Clock } from "#shared/ports/clock.ts";
import type { RootKeyVerifier } from "#shared/ports/root-key.ts";

/** A rotated root key takes effect within this many seconds on every warm function. */
export const ROOT_KEY_CACHE_SECONDS = 60;

/**
 * Root key hash read from an SSM SecureString parameter (AWS mode), decrypted, and kept in the process's one cache
 * (shared/domain/cache.ts) for ROOT_KEY_CACHE_SECONDS on the clock port: concurrent root requests of a cold or
 * expired cache share one read. What the parameter holds is kept as it is, valid or not (a parameter without a
 * valid hash refuses every key and is read again only when its time is up); a failed read is not kept.
 */
export class SsmRootKeyVerifier implements RootKeyVerifier {
  private readonly cache: Cache<{ value: string }>;

  constructor(
    private readonly ssm: SSMClient,
    private readonly parameterName: string,
    private readonly clock: Clock,
    maxAgeSeconds = ROOT_KEY_CACHE_SECONDS,
  ) {
    this.cache = new Cache({ ttlMs: maxAgeSeconds * 1000, maxEntries: 1 });
  }

  private async rootHash(): Promise<string | undefined> {
    const stored = await this.cache.get(this.parameterName, this.clock.now().getTime(), async () => {
      const { Parameter } = await this.ssm.send(
        new GetParameterCommand({ Name: this.parameterName, WithDecryption: true }),
      );
      return { value: Parameter?.Value ?? "" };
    });
    const value = stored?.value.trim().toLowerCase();
    return value && /^[a-f0-9]{64}$/.test(value) ? value : undefined;
  }

  async isRootKey(keyHash: string): Promise<boolean> {
    const hash = await this.rootHash();
    return hash !== undefined && digestsEqual(keyHash, hash);
  }
}
