import { SSMProvider } from "@aws-lambda-powertools/parameters/ssm";
import type { SSMClient } from "@aws-sdk/client-ssm";
import { digestsEqual } from "#shared/ids.ts";
import type { RootKeyVerifier } from "#shared/ports/root-key.ts";

/** A rotated root key takes effect within this many seconds on every warm function. */
export const ROOT_KEY_CACHE_SECONDS = 60;

/**
 * Root key hash read from an SSM SecureString parameter (AWS mode) through Powertools Parameters, which
 * caches the decrypted value for ROOT_KEY_CACHE_SECONDS (its cache reads the wall clock, not the clock
 * port: the only thing it times is this refresh).
 */
export class SsmRootKeyVerifier implements RootKeyVerifier {
  private readonly parameters: SSMProvider;

  constructor(
    ssm: SSMClient,
    private readonly parameterName: string,
    private readonly maxAgeSeconds = ROOT_KEY_CACHE_SECONDS,
  ) {
    this.parameters = new SSMProvider({ awsSdkV3Client: ssm });
  }

  private async rootHash(): Promise<string | undefined> {
    const raw = await this.parameters.get(this.parameterName, {
      decrypt: true,
      maxAge: this.maxAgeSeconds,
    });
    const value = typeof raw === "string" ? raw.trim().toLowerCase() : undefined;
    return value && /^[a-f0-9]{64}$/.test(value) ? value : undefined;
  }

  async isRootKey(keyHash: string): Promise<boolean> {
    const hash = await this.rootHash();
    return hash !== undefined && digestsEqual(keyHash, hash);
  }
}
