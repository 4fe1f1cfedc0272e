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
    if (specifier.startsWith(".")) return relative(ROOT, resolve(join(ROOT, dirname(file)), specifier));
    return specifier; // a package
  });
}

function violations(folder: string, forbidden: readonly string[]): string[] {
  return sourceFiles(folder).flatMap((file) =>
    importsOf(file)
      .filter((target) => forbidden.some((prefix) => target.startsWith(prefix)))
      .map((target) => `${file} imports ${target}`),
  );
}

describe("import boundaries", () => {
  it("keeps the domain free of HTTP, of the functions and of adapters", () => {
    expect(violations("shared/domain", ["shared/http", "functions/", "shared/adapters"])).toEqual([]);
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
