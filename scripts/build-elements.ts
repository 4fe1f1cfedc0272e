/**
 * Writes the Elements bundles (elements.js, frame.js) into the directory given, and prints their sizes and
 * SRI hashes. CDK runs it after bundling the sessions function, next to its index.mjs (lib/bundling.ts).
 *   node --import tsx scripts/build-elements.ts <directory>
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import { buildElements, integrityOf } from "#shared/elements/build.ts";

const directory = process.argv[2];
if (!directory) {
  console.error("usage: build-elements.ts <directory>");
  process.exit(2);
}
mkdirSync(directory, { recursive: true });
const bundle = await buildElements();
for (const [name, code] of Object.entries(bundle)) {
  writeFileSync(join(directory, name), code);
  console.log(`${name}: ${code.length} B, ${gzipSync(code).length} B gzipped, ${integrityOf(code)}`);
}
