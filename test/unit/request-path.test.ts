import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { decodeFully, hasDotSegment, joinPath } from "#shared/egress/request-path.ts";

/** Percent-encodes every character of `text` (its UTF-8 bytes), in upper or lower case hex. */
const encodeAll = (text: string, upper: boolean) =>
  [...Buffer.from(text, "utf8")]
    .map((byte) => {
      const hex = byte.toString(16).padStart(2, "0");
      return `%${upper ? hex.toUpperCase() : hex}`;
    })
    .join("");

/** Overlong UTF-8 forms of an ASCII character, as old lenient decoders accepted them. */
const overlong = (char: string): string[] => {
  const code = char.charCodeAt(0);
  const two = [0xc0 | (code >> 6), 0x80 | (code & 0x3f)];
  const three = [0xe0, 0x80 | (code >> 6), 0x80 | (code & 0x3f)];
  const four = [0xf0, 0x80, 0x80 | (code >> 6), 0x80 | (code & 0x3f)];
  return [two, three, four].map((bytes) => bytes.map((b) => `%${b.toString(16)}`).join(""));
};

/** One round of percent-decoding, as most servers do it. */
const decodeOnce = (text: string) =>
  text.replace(/(?:%[0-9a-fA-F]{2})+/g, (run) =>
    Buffer.from(run.replaceAll("%", ""), "hex").toString("utf8"),
  );

describe("hasDotSegment: any disguise of '.' and '..'", () => {
  it.each([
    "/..",
    "/a/../b",
    "/./x",
    "/%2e%2e/x",
    "/%2E%2e/x",
    "/.%2E/x",
    "/..%2fb",
    "/a%2f..%2fb",
    "/a/..%5cb",
    "/a\\..\\b",
    "/%252e%252e%252f",
    "/%25252e%25252e/x",
    "/%2525252525252e%2525252525252e/x", // five levels: past the old fixed four rounds
    "/%c0%ae%c0%ae/x",
    "/%C0%AE%C0%AE%C0%AF",
    "/%e0%80%ae%e0%80%ae/x",
    "/%f0%80%80%ae./x",
    "/a%c0%af..%c0%afb",
    "/a%c1%9c..",
    "/%u002e%u002e/x",
    "/%u002E./x",
    "/\uff0e\uff0e/x",
    "/%ef%bc%8e%ef%bc%8e/x",
    "/\u2025/x",
    "/a\uff0f..\uff0fb",
    "/..;jsessionid=1/x",
    "/..%3bx/y",
    "/..%00/x",
    "/..%20/x",
    "/%09..%0d%0a/x",
    "/..%3f/x",
    "/..%23/x",
  ])("refuses %j", (suffix) => {
    expect(hasDotSegment(suffix)).toBe(true);
    expect(() => joinPath(new URL("http://h/api"), suffix, "")).toThrow(/'\.' or '\.\.' segments/);
  });

  it.each([
    "/v1/charges",
    "/.well-known/a..b/...",
    "/a%2Fb",
    "/a%252Fb",
    "/%zz/%",
    "/a%2520b",
    "/file.json",
    "/..a/b..",
    "/\u00e9t\u00e9",
  ])("passes %j", (suffix) => {
    expect(hasDotSegment(suffix)).toBe(false);
  });

  it("refuses a suffix that does not settle within the decoding rounds, whatever it hides", () => {
    const deep = `/${"%25".repeat(1)}${"25".repeat(10)}41`; // "%25252525…41": eleven levels
    expect(decodeFully(deep)).toBeUndefined();
    expect(hasDotSegment(deep)).toBe(true);
  });

  it("decodes to a fixed point", () => {
    expect(decodeFully("/a%252e%2e%u002e%c0%ae\uff0e")).toBe("/a.....");
    expect(decodeFully("/plain")).toBe("/plain");
  });

  it("property: '.' or '..' disguised by any mix of encodings, nesting and case is refused", () => {
    const dot = fc.oneof(
      fc.constant("."),
      fc.boolean().map((upper) => encodeAll(".", upper)),
      fc.constantFrom(...overlong("."), "%u002e", "\uff0e", "%ef%bc%8e", "\ufe52"),
    );
    const slash = fc.oneof(
      fc.constantFrom("/", "\\", "\uff0f", "%u002f", ...overlong("/"), ...overlong("\\")),
      fc.boolean().map((upper) => encodeAll("/", upper)),
      fc.boolean().map((upper) => encodeAll("\\", upper)),
    );
    /** Wraps a piece in `%25` nesting: every "%" of it encoded again, up to 5 times. */
    const nest = (piece: string, times: number) => {
      let out = piece;
      for (let i = 0; i < times; i++) out = out.replaceAll("%", "%25");
      return out;
    };
    const segment = fc.oneof(
      dot,
      fc.tuple(dot, dot).map(([a, b]) => a + b),
    );
    fc.assert(
      fc.property(
        fc.stringMatching(/^[a-z0-9_-]{0,5}$/),
        segment,
        slash,
        fc.stringMatching(/^[a-z0-9_-]{0,5}$/),
        fc.integer({ min: 0, max: 5 }),
        fc.constantFrom("", ";p=1", "%3b", "%00"),
        (before, disguised, separator, after, times, tail) => {
          const suffix = nest(
            `/${before}${before ? separator : ""}${disguised}${tail}${separator}${after}`,
            times,
          );
          expect(hasDotSegment(suffix)).toBe(true);
        },
      ),
      { numRuns: 2000 },
    );
  });

  it("property: what passes cannot climb above the destination's path, however often a server decodes it", () => {
    const pieces = fc.constantFrom(
      "a",
      "b.c",
      ".",
      "..",
      "/",
      "\\",
      "%",
      "25",
      "2e",
      "2E",
      "2f",
      "5c",
      "c0",
      "ae",
      "%u00",
      ";",
      "\uff0e",
    );
    fc.assert(
      fc.property(fc.array(pieces, { maxLength: 12 }), fc.integer({ min: 0, max: 7 }), (parts, rounds) => {
        const suffix = `/${parts.join("")}`;
        let path: string;
        try {
          path = joinPath(new URL("http://h/api/v1"), suffix, "");
        } catch {
          return; // refused
        }
        // A server that decodes it `rounds` times, or as far as it goes, treats "\\" as "/", then resolves
        // dot segments (WHATWG URL also takes "%2e" for "."): never above /api/v1.
        const stages = [path];
        for (let i = 0; i < rounds; i++) stages.push(decodeOnce(stages[stages.length - 1] ?? ""));
        stages.push(decodeFully(path) ?? path);
        for (const stage of stages) {
          const target = stage.replaceAll("\\", "/").replaceAll("?", "%3F").replaceAll("#", "%23");
          const resolved = new URL(target, "http://h").pathname;
          expect(resolved === "/api/v1" || resolved.startsWith("/api/v1/"), `${suffix} → ${stage}`).toBe(
            true,
          );
        }
      }),
      { numRuns: 3000 },
    );
  });
});
