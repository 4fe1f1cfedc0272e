import { GetParameterCommand, type SSMClient } from "@aws-sdk/client-ssm";
import { digestsEqual } from "#shared/ids.ts";
import type { Clock } from "#shared/ports/clock.ts";
import type { RootKeyVerifier } from "#shared/ports/root-key.ts";

/** A rotated root key takes effect within this many seconds on every warm function. */
export const ROOT_KEY_CACHE_SECONDS = 60;

/** Root key hash read from an SSM SecureString parameter (AWS mode), cached for a minute. */
export class SsmRootKeyVerifier implements RootKeyVerifier {
  private cached?: { hash: string | undefined; at: number };

  constructor(
    private readonly ssm: SSMClient,
    private readonly parameterName: string,
    private readonly clock: Clock,
  ) {}

  private async rootHash(): Promise<string | undefined> {
    const now = this.clock.now().getTime();
    if (this.cached && now - this.cached.at < ROOT_KEY_CACHE_SECONDS * 1000) return this.cached.hash;
    const out = await this.ssm.send(
      new GetParameterCommand({ Name: this.parameterName, WithDecryption: true }),
    );
    const value = out.Parameter?.Value?.trim().toLowerCase();
    const hash = value && /^[a-f0-9]{64}$/.test(value) ? value : undefined;
    this.cached = { hash, at: now };
    return hash;
  }

  async isRootKey(keyHash: string): Promise<boolean> {
    const hash = await this.rootHash();
    return hash !== undefined && digestsEqual(keyHash, hash);
  }
}
