/*
 * Path suffixes are never normalized: a suffix holding a `.` or `..` segment (in any percent-encoded,
 * double-encoded, backslash or `;param` disguise) is refused, so the request cannot climb above
 * destination_url's path on any server, whatever its own normalization.
 */
import { invalid } from "./forward-errors.ts";

/** destination path (one trailing "/" removed) + suffix + "?" + query (merged with "&" into an existing one). */
export function joinPath(url: URL, pathSuffix: string, rawQuery: string): string {
  const suffix = pathSuffix === "" || pathSuffix.startsWith("/") ? pathSuffix : `/${pathSuffix}`;
  if (hasDotSegment(suffix)) throw invalid("The path suffix must not contain '.' or '..' segments.");
  const base = url.pathname.endsWith("/") ? url.pathname.slice(0, -1) : url.pathname;
  const path = `${base}${encodeUnsafe(suffix, /[?#]/)}` || "/";
  const query = [url.search.slice(1), encodeUnsafe(rawQuery, /#/)].filter((part) => part !== "").join("&");
  return query ? `${path}?${query}` : path;
}

/**
 * True when some segment, once percent-decoded (repeatedly, to see through double encoding) and split on
 * "/" and "\" (encoded slashes, Windows-style servers), is "." or ".." possibly followed by ";params".
 */
function hasDotSegment(suffix: string): boolean {
  for (const segment of suffix.split("/")) {
    let decoded = segment;
    for (let round = 0; round < 4; round++) {
      const next = decoded.replace(/%([0-9a-fA-F]{2})/g, (_, hex: string) =>
        String.fromCharCode(Number.parseInt(hex, 16)),
      );
      if (next === decoded) break;
      decoded = next;
    }
    for (const piece of decoded.split(/[/\\]/)) {
      const name = piece.split(";")[0];
      if (name === "." || name === "..") return true;
    }
  }
  return false;
}

/**
 * Percent-encode only what cannot appear raw in a request target (controls, space, non-ASCII, and the
 * delimiters in `special`); everything else, existing %XX escapes included, is passed byte for byte so
 * signatures over the path or query still hold.
 */
function encodeUnsafe(text: string, special: RegExp): string {
  let out = "";
  for (const char of text) {
    const code = char.codePointAt(0) ?? 0;
    if (code > 0x20 && code < 0x7f && !special.test(char)) {
      out += char;
      continue;
    }
    try {
      out += encodeURIComponent(char);
    } catch {
      throw invalid("The path or query holds malformed text.");
    }
  }
  return out;
}
