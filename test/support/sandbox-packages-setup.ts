import { ensureSandboxPackages } from "#lib/sandbox-packages.ts";

/** The packages tenant code may require, built when missing or stale (lib/sandbox-packages.ts); no Java. */
export default async function setup() {
  await ensureSandboxPackages();
}
