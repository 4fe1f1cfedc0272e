import { randomBytes } from "node:crypto";
import { existsSync, mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { type CustomerKeys, CustomerKeyUnavailable } from "#shared/ports/customer-keys.ts";
import type { KeyWrapper } from "#shared/ports/key-wrapper.ts";
import { MasterKeyWrapper, readMasterKey } from "./master-key-wrapper.ts";

/**
 * A local stand-in for a customer's KMS key: `arn:aws:kms:local:000000000000:key/<name>` is the 32-byte key in
 * `<SVC_LOCAL_KMS_DIR>/<name>.key`; a `<name>.disabled` file beside it disables it, as the customer would in KMS.
 * The name is all the tenant chooses, and it is a plain word: no path reaches outside the directory.
 */
export const LOCAL_KEY_ARN = /^arn:aws:kms:local:000000000000:key\/([A-Za-z0-9-]{1,64})$/;

export const localKeyArn = (name: string) => `arn:aws:kms:local:000000000000:key/${name}`;

/** Creates a local customer key (tests, trying BYOK out); answers its ARN. */
export function createLocalCustomerKey(dir: string, name: string): string {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  writeFileSync(join(dir, `${name}.key`), `${randomBytes(32).toString("base64")}\n`, {
    mode: 0o600,
    flag: "wx",
  });
  return localKeyArn(name);
}

/** Disables or enables a local customer key, as DisableKey/EnableKey would. */
export function setLocalCustomerKeyEnabled(dir: string, name: string, enabled: boolean): void {
  const marker = join(dir, `${name}.disabled`);
  if (enabled) rmSync(marker, { force: true });
  else writeFileSync(marker, "");
}

export class LocalCustomerKeys implements CustomerKeys {
  constructor(
    private readonly dir: string,
    /** The deployment's wrapper (the master key): where data keys are before a tenant brings its own. */
    private readonly deployment: MasterKeyWrapper,
  ) {}

  /** The key behind an ARN, read on every use: disabling it takes effect at the next unwrap. */
  private keyOf(keyArn: string): MasterKeyWrapper {
    const name = LOCAL_KEY_ARN.exec(keyArn)?.[1];
    if (!name) throw new CustomerKeyUnavailable("NotFoundException");
    if (existsSync(join(this.dir, `${name}.disabled`))) throw new CustomerKeyUnavailable("DisabledException");
    const key = readMasterKey(join(this.dir, `${name}.key`));
    if (!key) throw new CustomerKeyUnavailable("NotFoundException");
    return new MasterKeyWrapper(key);
  }

  wrapper(keyArn: string): KeyWrapper {
    return {
      generateDataKey: async (context) => this.keyOf(keyArn).generateDataKey(context),
      unwrap: async (wrapped, context) => {
        const key = this.keyOf(keyArn);
        try {
          return await key.unwrap(wrapped, context);
        } catch {
          // Another key under the same name: KMS answers the same for a ciphertext of another key.
          throw new CustomerKeyUnavailable("IncorrectKeyException");
        }
      },
    };
  }

  async reEncrypt(wrapped: Buffer, context: Record<string, string>, from: string | undefined, to: string) {
    const plaintext = await (from ? this.wrapper(from) : this.deployment).unwrap(wrapped, context);
    return this.keyOf(to).wrap(plaintext, context);
  }
}
