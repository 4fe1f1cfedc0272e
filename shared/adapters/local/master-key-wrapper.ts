import { createCipheriv, createDecipheriv, randomBytes } from "node:crypto";
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";
import type { KeyWrapper } from "#shared/ports/key-wrapper.ts";

const IV_BYTES = 12;
const TAG_BYTES = 16;

function contextAad(context: Record<string, string>): Buffer {
  return Buffer.from(JSON.stringify(Object.entries(context).sort(([a], [b]) => a.localeCompare(b))), "utf8");
}

/** The local master key in `file`, or undefined when there is none. */
export function readMasterKey(file: string): Buffer | undefined {
  if (!existsSync(file)) return undefined;
  const key = Buffer.from(readFileSync(file, "utf8").trim(), "base64");
  if (key.length !== 32) throw new Error(`The master key in ${file} is not 32 bytes of base64`);
  return key;
}

/** A new master key (32 random bytes) in `file`, mode 600; never overwrites one. */
export function createMasterKey(file: string): Buffer {
  mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
  const key = randomBytes(32);
  writeFileSync(file, `${key.toString("base64")}\n`, { mode: 0o600, flag: "wx" });
  chmodSync(file, 0o600);
  return key;
}

/** Reads the local master key, creating it on first use (the bench's floor; the service checks it first). */
export function loadOrCreateMasterKey(file: string): Buffer {
  return readMasterKey(file) ?? createMasterKey(file);
}

/** Local stand-in for KMS: data keys wrapped with AES-256-GCM under a master key, the context as AAD. */
export class MasterKeyWrapper implements KeyWrapper {
  constructor(private readonly masterKey: Buffer) {
    if (masterKey.length !== 32) throw new Error("The master key must be 32 bytes");
  }

  async generateDataKey(context: Record<string, string>) {
    const plaintext = randomBytes(32);
    return { plaintext, wrapped: this.wrap(plaintext, context) };
  }

  /** Wraps a given data key (a re-wrap under another key: local-customer-keys.ts). */
  wrap(plaintext: Buffer, context: Record<string, string>): Buffer {
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv("aes-256-gcm", this.masterKey, iv);
    cipher.setAAD(contextAad(context));
    const body = Buffer.concat([cipher.update(plaintext), cipher.final()]);
    return Buffer.concat([iv, cipher.getAuthTag(), body]);
  }

  async unwrap(wrapped: Buffer, context: Record<string, string>) {
    const iv = wrapped.subarray(0, IV_BYTES);
    const tag = wrapped.subarray(IV_BYTES, IV_BYTES + TAG_BYTES);
    const decipher = createDecipheriv("aes-256-gcm", this.masterKey, iv);
    decipher.setAAD(contextAad(context));
    decipher.setAuthTag(tag);
    return Buffer.concat([decipher.update(wrapped.subarray(IV_BYTES + TAG_BYTES)), decipher.final()]);
  }
}
