import { DomainError } from "#shared/domain/errors.ts";
import { type CustomerKeys, CustomerKeyUnavailable } from "#shared/ports/customer-keys.ts";
import type { GeneratedKey, KeyWrapper } from "#shared/ports/key-wrapper.ts";

/**
 * A data key wrapped under a tenant's own key names that key: `svcbyok1` <u16 length> <key ARN> <wrapped>.
 * Unwrapping follows what the stored key says, so a tenant that changes keys never has a data key opened with
 * the wrong one; keys of the deployment are stored as they always were.
 */
const MAGIC = Buffer.from("svcbyok1", "ascii");

export function frameCustomerWrapped(keyArn: string, wrapped: Buffer): Buffer {
  const arn = Buffer.from(keyArn, "utf8");
  const length = Buffer.alloc(2);
  length.writeUInt16BE(arn.length);
  return Buffer.concat([MAGIC, length, arn, wrapped]);
}

/** The customer key a stored data key is wrapped under (undefined: the deployment's) and the wrapped bytes. */
export function unframe(stored: Buffer): { keyArn?: string; wrapped: Buffer } {
  if (stored.length < MAGIC.length + 2 || !stored.subarray(0, MAGIC.length).equals(MAGIC))
    return { wrapped: stored };
  const length = stored.readUInt16BE(MAGIC.length);
  const start = MAGIC.length + 2;
  return {
    keyArn: stored.subarray(start, start + length).toString("utf8"),
    wrapped: stored.subarray(start + length),
  };
}

/** 423: the tenant's key refuses; what it was is named (a KMS error name), never how the request looked. */
export const keyUnavailable = (reason: string) =>
  new DomainError(
    "locked",
    `The tenant's own KMS key cannot be used (${reason}): nothing of the tenant can be sealed or opened until the key is enabled and granted again.`,
  );

async function failingClosed<T>(call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (error) {
    if (error instanceof CustomerKeyUnavailable) throw keyUnavailable(error.reason);
    throw error;
  }
}

/**
 * The keyring's wrapper: each tenant's data keys under its own KMS key once it brought one (PUT
 * /tenants/self/keys/kms), else under the deployment's. Behind the one KeyWrapper port, so the keyring, its
 * cache and every path that seals or opens data stay as they are; a refusing customer key is a 423.
 */
export class TenantKeyWrapper implements KeyWrapper {
  constructor(
    private readonly deployment: KeyWrapper,
    private readonly customerKeys: CustomerKeys,
    /** The tenant's key ARN, read fresh: a new data key goes under the key the tenant has now. */
    private readonly customerKeyOf: (tenantId: string) => Promise<string | undefined>,
  ) {}

  async generateDataKey(context: Record<string, string>): Promise<GeneratedKey> {
    if (!context.tenant_id) return this.deployment.generateDataKey(context);
    const keyArn = await this.customerKeyOf(context.tenant_id);
    if (!keyArn) return { ...(await this.deployment.generateDataKey(context)), custody: null };
    const generated = await failingClosed(() => this.customerKeys.wrapper(keyArn).generateDataKey(context));
    return {
      plaintext: generated.plaintext,
      wrapped: frameCustomerWrapped(keyArn, generated.wrapped),
      custody: keyArn,
    };
  }

  async unwrap(stored: Buffer, context: Record<string, string>) {
    const { keyArn, wrapped } = unframe(stored);
    // A data key under another key than the tenant's own key now (the deployment's, or an earlier key of the
    // tenant's): a move cut short (a ReEncrypt that failed midway; sending the PUT again finishes it). It opens only
    // while the tenant's current key would take it: it opened with that key disabled, so a tenant that locked its
    // data still had it read (key custody review, 28 Nov 2026; for an earlier customer key, stop 50's review).
    const custody = context.tenant_id ? await this.customerKeyOf(context.tenant_id) : undefined;
    if (custody && custody !== keyArn)
      await failingClosed(() => this.customerKeys.reEncrypt(wrapped, context, keyArn, custody));
    if (keyArn) return failingClosed(() => this.customerKeys.wrapper(keyArn).unwrap(wrapped, context));
    return this.deployment.unwrap(wrapped, context);
  }
}
