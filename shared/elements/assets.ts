import { existsSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import type { ElementsBundle } from "./build.ts";

/** Where a deployed function finds the bundles: next to its own bundle (lib/constructs builds them there). */
export const ASSETS_DIRECTORY = "elements-assets";

let loading: Promise<ElementsBundle> | undefined;

/**
 * The Elements bundles, loaded once per process: read from `elements-assets/` beside the running module when
 * a deployment put them there, otherwise built from elements/src (local mode and tests, where esbuild is
 * installed). The build module is imported by a computed name so no function bundle ever includes esbuild.
 */
export function elementsAssets(): Promise<ElementsBundle> {
  loading ??= load().catch((error: unknown) => {
    loading = undefined;
    throw error;
  });
  return loading;
}

async function load(): Promise<ElementsBundle> {
  const directory = join(dirname(fileURLToPath(import.meta.url)), ASSETS_DIRECTORY);
  if (existsSync(join(directory, "elements.js"))) {
    const [elements, frame] = await Promise.all([
      readFile(join(directory, "elements.js"), "utf8"),
      readFile(join(directory, "frame.js"), "utf8"),
    ]);
    return { "elements.js": elements, "frame.js": frame };
  }
  const builder = "./build.ts";
  const { buildElements } = (await import(/* @vite-ignore */ builder)) as typeof import("./build.ts");
  return buildElements();
}
