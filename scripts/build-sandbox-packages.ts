/**
 * `npm run build:sandbox-packages [outDir]`: builds the packages tenant code may require (lib/sandbox-packages.ts)
 * into shared/sandbox/sandbox-packages/built/, or into `outDir` (the runner bundle's, during CDK bundling).
 * `npm start`, the tests and the bench build them on their own when they are missing or stale.
 */
import { resolve } from "node:path";
import { BUILT_PACKAGES_DIR, buildSandboxPackages } from "#lib/sandbox-packages.ts";

const outDir = process.argv[2] ? resolve(process.argv[2]) : BUILT_PACKAGES_DIR;
const packages = await buildSandboxPackages(outDir);
console.log(`Built ${Object.keys(packages).length} sandbox packages into ${outDir}`);
