import { chmodSync, mkdirSync } from "node:fs";

/**
 * Makes `path` a directory only its owner may list and read (0700), also when it already existed: the local
 * data (DynamoDB Local's file: tenants, owners' e-mails, the audit log, key items) is no other local user's.
 * A directory this user does not own is left as it is.
 */
export function privateDirectory(path: string): string {
  mkdirSync(path, { recursive: true, mode: 0o700 });
  try {
    chmodSync(path, 0o700);
  } catch {}
  return path;
}
