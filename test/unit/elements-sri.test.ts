import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { buildElements, integrityOf } from "#shared/elements/build.ts";

describe("elements.js SRI", () => {
  it("docs/elements.md publishes the hash of the elements.js this code builds", async () => {
    const docs = readFileSync(new URL("../../docs/elements.md", import.meta.url), "utf8");
    const published = new Set(docs.match(/sha384-[A-Za-z0-9+/=]{64}/g));
    const built = integrityOf((await buildElements())["elements.js"]);
    expect([...published]).toEqual([built]);
  });
});
