import { createHash } from "node:crypto";
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { builtinModules } from "node:module";
import { join } from "node:path";
import { build, version as esbuildVersion } from "esbuild";
import { REPO_ROOT } from "./bundling.ts";

/**
 * The npm packages tenant code may `require` (docs/sandbox.md, "Packages"): pure JavaScript, pinned in
 * package.json, each pre-built here into one CommonJS file that the sandbox child evaluates inside the run's own
 * context on the run's first `require` of it. `specifier` is what the code writes in `require(...)`.
 */
export const SANDBOX_PACKAGES: readonly { specifier: string; entry?: string }[] = [
  { specifier: "axios" },
  { specifier: "uuid" },
  { specifier: "crypto-js" },
  { specifier: "node-forge" },
  { specifier: "jose" },
  // The synchronous API only: the package's main entry is a Node stream, and the sandbox offers no `stream`.
  { specifier: "csv-parse/sync" },
  { specifier: "xmlbuilder2" },
  { specifier: "yup" },
  { specifier: "jsonpath-plus" },
  { specifier: "pdf-lib" },
];

/** Where the child looks for built packages: `sandbox-packages/built/` next to child.mjs (gitignored here). */
export const BUILT_PACKAGES_DIR = join(REPO_ROOT, "shared", "sandbox", "sandbox-packages", "built");

/** Small shims bundled in place of Node built-ins a package needs and the sandbox does not offer. */
const SHIMS_DIR = join(REPO_ROOT, "lib", "sandbox-shims");

/** `csv-parse/sync` → `csv-parse__sync.js` */
const fileOf = (specifier: string) => `${specifier.replace(/^@/, "").replace(/\//g, "__")}.js`;

/**
 * Node built-ins stay `require` calls: inside the sandbox they resolve to its frozen facades (crypto, buffer,
 * util, url, querystring, string_decoder); any other built-in throws when a package asks for it.
 */
const NODE_BUILTINS = [...builtinModules, ...builtinModules.map((name) => `node:${name}`)];

/**
 * Builds every package into `<outDir>/<file>.js` plus `manifest.json` ({specifier: file}). Browser builds are
 * chosen (platform "browser"): they use WHATWG APIs (fetch, web crypto, TextEncoder) the sandbox offers, where
 * the Node builds would reach for http, fs or zlib, which it does not.
 */
export async function buildSandboxPackages(outDir: string): Promise<Record<string, string>> {
  rmSync(outDir, { recursive: true, force: true });
  mkdirSync(outDir, { recursive: true });
  const packages: Record<string, string> = {};
  for (const { specifier, entry } of SANDBOX_PACKAGES) {
    const file = fileOf(specifier);
    await build({
      stdin: {
        contents: `module.exports = require(${JSON.stringify(entry ?? specifier)});`,
        resolveDir: REPO_ROOT,
        sourcefile: `${specifier}-entry.js`,
      },
      bundle: true,
      platform: "browser",
      format: "cjs",
      target: "es2022",
      minify: true,
      keepNames: true,
      external: NODE_BUILTINS.filter((name) => name !== "events"),
      alias: { events: join(SHIMS_DIR, "events.cjs") },
      define: { "process.env.NODE_ENV": '"production"', global: "globalThis" },
      legalComments: "none",
      outfile: join(outDir, file),
      logLevel: "error",
    });
    packages[specifier] = file;
  }
  const manifest = { stamp: sandboxPackagesStamp(), packages };
  writeFileSync(join(outDir, "manifest.json"), `${JSON.stringify(manifest, null, 2)}\n`);
  return packages;
}

/** What a build depends on: the list, the installed versions, esbuild's version and this file and its shims. */
export function sandboxPackagesStamp(): string {
  const hash = createHash("sha256");
  for (const { specifier, entry } of SANDBOX_PACKAGES) {
    const path = entry ?? specifier;
    const name = path
      .split("/")
      .slice(0, path.startsWith("@") ? 2 : 1)
      .join("/");
    const { version } = JSON.parse(
      readFileSync(join(REPO_ROOT, "node_modules", name, "package.json"), "utf8"),
    ) as { version: string };
    hash.update(`${specifier}=${entry ?? ""}@${version};`);
  }
  hash.update(esbuildVersion);
  hash.update(readFileSync(new URL(import.meta.url)));
  for (const shim of readdirSync(SHIMS_DIR).sort()) hash.update(readFileSync(join(SHIMS_DIR, shim)));
  return hash.digest("hex");
}

/** Builds the packages into `outDir` unless a build of the same stamp is there; true when it built. */
export async function ensureSandboxPackages(outDir = BUILT_PACKAGES_DIR): Promise<boolean> {
  try {
    const manifest = JSON.parse(readFileSync(join(outDir, "manifest.json"), "utf8")) as { stamp?: string };
    if (manifest.stamp === sandboxPackagesStamp()) return false;
  } catch {
    // not built yet
  }
  await buildSandboxPackages(outDir);
  return true;
}

/** The built files, for the child's `--allow-fs-read` (empty when nothing was built). */
export function builtFiles(outDir: string): string[] {
  try {
    return readdirSync(outDir).map((name) => join(outDir, name));
  } catch {
    return [];
  }
}
