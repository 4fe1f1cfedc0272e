import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { describe, expect, it } from "vitest";

const ROOT = resolve(import.meta.dirname, "../..");

function sourceFiles(folder: string): string[] {
  return readdirSync(join(ROOT, folder), { recursive: true, encoding: "utf8" })
    .filter((file) => /\.(ts|mts|mjs|js)$/.test(file))
    .map((file) => join(folder, file));
}

/** Every module a file imports or re-exports (static, type-only and dynamic), as a path from the root. */
function importsOf(file: string): string[] {
  const text = readFileSync(join(ROOT, file), "utf8");
  const specifiers = [
    ...text.matchAll(/\b(?:import|export)\s[^;]*?\bfrom\s*["']([^"']+)["']/g),
    ...text.matchAll(/\bimport\s*\(?\s*["']([^"']+)["']/g),
  ].map((match) => match[1] as string);
  return specifiers.map((specifier) => {
    if (specifier.startsWith("#shared/")) return `shared/${specifier.slice("#shared/".length)}`;
    if (specifier.startsWith("#functions/")) return `functions/${specifier.slice("#functions/".length)}`;
    if (specifier.startsWith("#lib/")) return `lib/${specifier.slice("#lib/".length)}`;
    if (specifier.startsWith("#test/")) return `test/${specifier.slice("#test/".length)}`;
    if (specifier.startsWith(".")) return relative(ROOT, resolve(join(ROOT, dirname(file)), specifier));
    return specifier; // a package
  });
}

const isSource = (target: string) => /^(shared|functions|lib|test)\/.*\.(ts|mts|mjs|js)$/.test(target);

/**
 * The first chain of imports from `file` to a forbidden module, followed transitively through the repository's
 * own files (packages are leaves), or undefined. A domain file that reaches outbound HTTP through a helper is
 * as coupled to it as one that imports it directly.
 */
function forbiddenChain(file: string, forbidden: readonly string[]): string[] | undefined {
  const seen = new Set<string>([file]);
  const queue: string[][] = [[file]];
  for (let path = queue.shift(); path; path = queue.shift()) {
    for (const target of importsOf(path[path.length - 1] as string)) {
      if (forbidden.some((prefix) => target.startsWith(prefix))) return [...path, target];
      if (seen.has(target) || !isSource(target)) continue;
      seen.add(target);
      queue.push([...path, target]);
    }
  }
  return undefined;
}

function violations(folder: string, forbidden: readonly string[]): string[] {
  return sourceFiles(folder).flatMap((file) => {
    const chain = forbiddenChain(file, forbidden);
    return chain ? [chain.join(" → ")] : [];
  });
}

/** What the domain must not reach, directly or through other modules: transports, adapters and entry points. */
const OUTSIDE_THE_DOMAIN = [
  "shared/http/",
  "functions/",
  "shared/adapters/",
  "shared/egress/",
  "shared/sandbox/outbound-fetch.ts",
  "shared/composition/",
  "node:http",
  "node:https",
  "node:net",
];

/** Every repository file `file` reaches through imports, itself excluded. */
function reachable(file: string): Set<string> {
  const seen = new Set<string>();
  const queue = [file];
  for (let next = queue.shift(); next; next = queue.shift())
    for (const target of importsOf(next))
      if (isSource(target) && !seen.has(target)) {
        seen.add(target);
        queue.push(target);
      }
  return seen;
}

describe("import boundaries", () => {
  it("has one import path per port type: no domain file re-exports from shared/ports", () => {
    const reExports = sourceFiles("shared/domain").filter((file) =>
      /\bexport\s[^;]*?\bfrom\s*["']#shared\/ports\//.test(readFileSync(join(ROOT, file), "utf8")),
    );
    expect(reExports).toEqual([]);
  });

  it("has no cycle between a port and the domain", () => {
    const cycles = sourceFiles("shared/ports").flatMap((port) =>
      [...reachable(port)]
        .filter((file) => file.startsWith("shared/domain/") && reachable(file).has(port))
        .map((file) => `${port} ⇄ ${file}`),
    );
    expect(cycles).toEqual([]);
  });

  it("keeps the domain free of HTTP, outbound HTTP, the functions and adapters, however indirectly", () => {
    expect(violations("shared/domain", OUTSIDE_THE_DOMAIN)).toEqual([]);
  });

  it("finds a domain file that reaches outbound HTTP through an intermediate module", () => {
    // The fixture's use case imports only a helper; the helper imports the egress adapter.
    expect(forbiddenChain("test/unit/fixtures/boundaries/use-case.ts", OUTSIDE_THE_DOMAIN)).toEqual([
      "test/unit/fixtures/boundaries/use-case.ts",
      "test/unit/fixtures/boundaries/helper.ts",
      "shared/egress/forward.ts",
    ]);
  });

  it("hands the route table to shared/http instead of shared/http importing it", () => {
    expect(violations("shared/http", ["shared/api", "shared/routes"])).toEqual([]);
  });

  it("reads imports the way the boundary needs: aliases, relative paths and type-only imports", () => {
    // The detector itself: a file known to import through `#shared/…` and one through `./…`.
    expect(importsOf("shared/http/middleware/error-handler.ts")).toEqual(
      expect.arrayContaining(["shared/logger.ts", "shared/http/problem.ts"]),
    );
    expect(importsOf("shared/domain/reactors/callbacks.ts")).toEqual(
      expect.arrayContaining(["shared/domain/reactors/callback-job.ts"]),
    );
  });
});
