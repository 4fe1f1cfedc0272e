import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { type BuildOptions, build, type Metafile } from "esbuild";
import { ASSETS_DIRECTORY } from "#shared/elements/assets.ts";
import type { FunctionGroup } from "#shared/http/route.ts";

/**
 * The package's root (functions/<group>/handler.ts, shared/ and package.json live there): the nearest directory
 * above this module with svc-vault's package.json. Found, not fixed, because this module runs both as lib/
 * source and bundled into dist/cdk/ of the installed package, where the Lambda code is bundled from.
 */
export const REPO_ROOT = packageRoot(dirname(fileURLToPath(import.meta.url)));

function packageRoot(from: string): string {
  for (let dir = from; ; dir = dirname(dir)) {
    try {
      const { name } = JSON.parse(readFileSync(join(dir, "package.json"), "utf8")) as { name?: string };
      if (name === "svc-vault") return `${dir}/`;
    } catch {
      // no package.json here: look further up
    }
    if (dirname(dir) === dir) throw new Error(`svc-vault's package.json was not found above ${from}`);
  }
}

/**
 * The one esbuild policy of every Lambda bundle. CDK's NodejsFunction (lib/constructs/api-function.ts)
 * is configured from it, and the bundle-size test builds with it directly, so what is
 * measured is what is deployed.
 */
export const BUNDLE_POLICY = {
  // Smaller asset and faster cold start.
  minify: true,
  // Minified, but class and function names survive (error.name checks, readable traces).
  keepNames: true,
  // ESM output (index.mjs): the SDK v3, middy and zod ship ESM builds that tree-shake better.
  format: "esm",
  // Syntax level of nodejs22.x, the oldest runtime we support; nodejs24.x runs it unchanged.
  target: "node22",
  // Prefer packages' ESM entry points, fall back to CommonJS ones.
  mainFields: ["module", "main"],
  // CommonJS dependencies bundled into ESM still call require() for Node built-ins; give them one
  // (aliased import, so it cannot clash with a bundled `import { createRequire }`).
  banner:
    "import { createRequire as __svcCreateRequire } from 'node:module'; const require = __svcCreateRequire(import.meta.url);",
  // Package → module (from the repository root) standing in for it in every bundle: a Lambda's credentials
  // always come from its environment, so the SDK's default chain shrinks to that link (see the module).
  alias: {
    "@aws-sdk/credential-provider-node": "./shared/adapters/aws/lambda-credentials.ts",
    // Used only by aws-xray-sdk-core's SDK v2 patcher, which never runs (see the module).
    semver: "./shared/adapters/aws/xray-semver.ts",
  },
} as const;

/**
 * What a deployed function has in its environment at import (config is read then; the values only have to
 * pass validation): for importing a bundle as Lambda does (the bench's cold imports, the tracing test).
 */
export const LAMBDA_IMPORT_ENV = {
  SVC_MODE: "aws",
  SVC_SANDBOX: "none",
  SVC_TABLE_NAME: "x",
  AWS_REGION: "us-east-1",
  AWS_LAMBDA_FUNCTION_NAME: "x",
  // Lambda sets it; with it the Tracer and the X-Ray SDK load at import, as they do in a cold start.
  AWS_EXECUTION_ENV: "AWS_Lambda_nodejs24.x",
  LOG_LEVEL: "SILENT",
} as const;

/**
 * Files a group's function needs beside its bundle, as commands CDK runs after bundling (repository and bundle
 * directories): the sessions function serves the Elements bundles (shared/elements/assets.ts reads them there).
 */
export const GROUP_AFTER_BUNDLING: Partial<
  Record<FunctionGroup, (inputDir: string, outputDir: string) => string[]>
> = {
  sessions: (inputDir, outputDir) => [
    `cd "${inputDir}" && node --import tsx scripts/build-elements.ts "${outputDir}/${ASSETS_DIRECTORY}"`,
  ],
};

/** functions/<group>/handler.ts */
export const handlerEntry = (group: string) => join(REPO_ROOT, "functions", group, "handler.ts");

export interface BuiltBundle {
  /** The minified bundle (no source map), as deployed. */
  code: Uint8Array;
  /** esbuild's metafile: which inputs (files and packages) the bundle holds. */
  metafile: Metafile;
}

/** Builds one function group's bundle in memory exactly as CDK does (minus the source map). */
export async function bundleGroup(group: string): Promise<BuiltBundle> {
  const options: BuildOptions = {
    entryPoints: [handlerEntry(group)],
    bundle: true,
    platform: "node",
    write: false,
    metafile: true,
    minify: BUNDLE_POLICY.minify,
    keepNames: BUNDLE_POLICY.keepNames,
    format: BUNDLE_POLICY.format,
    target: BUNDLE_POLICY.target,
    mainFields: [...BUNDLE_POLICY.mainFields],
    banner: { js: BUNDLE_POLICY.banner },
    alias: { ...BUNDLE_POLICY.alias },
    absWorkingDir: REPO_ROOT,
    logLevel: "warning",
  };
  const result = await build(options);
  const output = result.outputFiles?.[0];
  if (!output) throw new Error(`esbuild produced no output for ${group}`);
  return { code: output.contents, metafile: result.metafile as Metafile };
}

/** The npm packages a bundle holds (node_modules/<name> or node_modules/@scope/name of each input). */
export function packagesIn(metafile: Metafile): Set<string> {
  const names = new Set<string>();
  for (const input of Object.keys(metafile.inputs)) {
    const match = /(?:^|\/)node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(input);
    if (match?.[1]) names.add(match[1]);
  }
  return names;
}
