import { createHash } from "node:crypto";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";

/** elements/src: the browser code (its own tsconfig, DOM types). */
export const ELEMENTS_SOURCE = fileURLToPath(new URL("../../elements/src/", import.meta.url));

export interface ElementsBundle {
  /** The page's library (global `SvcElements`). */
  "elements.js": string;
  /** The frames' runtime. */
  "frame.js": string;
}

/**
 * Builds the two browser bundles in memory: minified IIFEs for browsers of the last few years, no source maps
 * (the frame page's CSP would have to allow fetching them), nothing from a third party (no package is imported).
 * `npm start` and the tests build at start; CDK builds next to the serving function's bundle (lib/).
 */
export async function buildElements(): Promise<ElementsBundle> {
  const one = async (entry: string, globalName?: string) => {
    const result = await build({
      entryPoints: [`${ELEMENTS_SOURCE}${entry}`],
      bundle: true,
      write: false,
      format: "iife",
      ...(globalName ? { globalName } : {}),
      platform: "browser",
      target: ["es2020", "chrome90", "firefox90", "safari15"],
      minify: true,
      legalComments: "none",
      logLevel: "warning",
    });
    const output = result.outputFiles[0];
    if (!output) throw new Error(`esbuild produced no output for ${entry}`);
    return output.text;
  };
  const [elements, frame] = await Promise.all([one("elements.ts", "SvcElements"), one("frame.ts")]);
  return { "elements.js": elements, "frame.js": frame };
}

/** The Subresource Integrity value of a bundle (what a merchant puts in `integrity`). */
export const integrityOf = (code: string) =>
  `sha384-${createHash("sha384").update(code, "utf8").digest("base64")}`;
