import { GetParameterCommand, type SSMClient } from "@aws-sdk/client-ssm";
import { ExpiringCache } from "#shared/domain/expiring-cache.ts";
import { digestsEqual } from "#shared/ids.ts";
import type { Clock } from "#shared/ports/clock.ts";
import type { RootKeyVerifier } from "#shared/ports/root-key.ts";

/** A rotated root key takes effect within this many seconds on every warm function. */
export const ROOT_KEY_CACHE_SECONDS = 60;

/** Root key hash read from an SSM SecureString parameter (AWS mode), cached for a minute. */
export class SsmRootKeyVerifier implements RootKeyVerifier {
  // The process's one TTL cache (as for API and proxy keys); the hash is wrapped so "no usable hash" is cached too.
  private readonly cache = new ExpiringCache<{ hash: string | undefined }>(ROOT_KEY_CACHE_SECONDS * 1000, 1);

  constructor(
    private readonly ssm: SSMClient,
    private readonly parameterName: string,
    private readonly clock: Clock,
  ) {}

  private async rootHash(): Promise<string | undefined> {
    const cached = await this.cache.get(this.parameterName, this.clock.now().getTime(), async () => {
      const out = await this.ssm.send(
        new GetParameterCommand({ Name: this.parameterName, WithDecryption: true }),
      );
      const value = out.Parameter?.Value?.trim().toLowerCase();
      return { hash: value && /^[a-f0-9]{64}$/.test(value) ? value : undefined };
    });
    return cached?.hash;
  }

  async isRootKey(keyHash: string): Promise<boolean> {
    const hash = await this.rootHash();
    return hash !== undefined && digestsEqual(keyHash, hash);
  }
}
