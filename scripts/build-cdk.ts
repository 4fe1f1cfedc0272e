/**
 * Builds the package's `svc-vault/cdk` entry into dist/cdk/ (npm pack runs it: the `prepack` script):
 *   index.js    lib/cdk.ts and the shared/ modules it reads, bundled by esbuild into one ES module; packages stay
 *               imports (aws-cdk-lib and constructs are the app's own, the rest are this package's dependencies).
 *   index.d.ts  tsc's declarations (tsconfig.cdk.json) under types/, with `#shared/…` and `….ts` specifiers
 *               rewritten to relative `.js` ones, which any TypeScript resolution finds.
 * The Lambda code is not built here: CDK bundles functions/ from the installed package when an app synthesizes.
 */
import { execFileSync } from "node:child_process";
import { readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { build } from "esbuild";
import { REPO_ROOT } from "#lib/bundling.ts";

const OUT = join(REPO_ROOT, "dist", "cdk");
const TYPES = join(OUT, "types");

rmSync(OUT, { recursive: true, force: true });

await build({
  entryPoints: [join(REPO_ROOT, "lib", "cdk.ts")],
  bundle: true,
  platform: "node",
  format: "esm",
  target: "node20",
  // `#shared/…` imports resolve through package.json "imports" and are bundled; every package stays external.
  packages: "external",
  outfile: join(OUT, "index.js"),
  absWorkingDir: REPO_ROOT,
  logLevel: "warning",
});

execFileSync(
  process.execPath,
  [join(REPO_ROOT, "node_modules", "typescript", "bin", "tsc"), "-p", "tsconfig.cdk.json"],
  {
    cwd: REPO_ROOT,
    stdio: "inherit",
  },
);

/** `#shared/a/b.ts` (package imports) or `./x.ts` → a relative `.js` specifier from `file`. */
function rewrite(file: string, specifier: string): string {
  const hash = /^#(shared|lib|functions)\/(.+)\.ts$/.exec(specifier);
  if (hash) {
    let path = relative(dirname(file), join(TYPES, hash[1] as string, `${hash[2]}.js`));
    if (!path.startsWith(".")) path = `./${path}`;
    return path;
  }
  return specifier.startsWith(".") ? specifier.replace(/\.ts$/, ".js") : specifier;
}

function declarations(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? declarations(path) : path.endsWith(".d.ts") ? [path] : [];
  });
}

let rewritten = 0;
for (const file of declarations(TYPES)) {
  const text = readFileSync(file, "utf8");
  const next = text.replace(
    /(\bfrom\s+|\bimport\s*\(\s*|\bimport\s+)(["'])([^"']+)\2/g,
    (_, lead: string, quote: string, specifier: string) =>
      `${lead}${quote}${rewrite(file, specifier)}${quote}`,
  );
  if (next !== text) rewritten++;
  writeFileSync(file, next);
}
writeFileSync(join(OUT, "index.d.ts"), 'export * from "./types/lib/cdk.js";\n');
console.log(
  `dist/cdk: index.js, index.d.ts and ${declarations(TYPES).length} declaration files (${rewritten} rewritten)`,
);
