/*
 * Path suffixes are never normalized: a suffix holding a `.` or `..` segment (in any percent-encoded, nested,
 * overlong UTF-8, `%u`, fullwidth, backslash or `;param` disguise) is refused, so the request cannot climb
 * above destination_url's path on any server, however many times it decodes.
 */
import { invalid } from "./errors.ts";

/** destination path (one trailing "/" removed) + suffix + "?" + query (merged with "&" into an existing one). */
export function joinPath(url: URL, pathSuffix: string, rawQuery: string): string {
  const suffix = pathSuffix === "" || pathSuffix.startsWith("/") ? pathSuffix : `/${pathSuffix}`;
  if (hasDotSegment(suffix)) throw invalid("The path suffix must not contain '.' or '..' segments.");
  const base = url.pathname.endsWith("/") ? url.pathname.slice(0, -1) : url.pathname;
  const path = `${base}${encodeUnsafe(suffix, /[?#]/)}` || "/";
  const query = [url.search.slice(1), encodeUnsafe(rawQuery, /#/)].filter((part) => part !== "").join("&");
  return query ? `${path}?${query}` : path;
}

/** Decoding rounds a suffix may need; one still changing after that is refused, not decoded further. */
const MAX_DECODE_ROUNDS = 8;

/** `%uXXXX` (IIS) or a run of `%XX` escapes. */
const ESCAPES = /%u[0-9a-fA-F]{4}|(?:%[0-9a-fA-F]{2})+/g;

/**
 * True when some segment is "." or "..", as any server along the way could come to see it: the suffix
 * decoded to a fixed point (decodeFully), split on "/" and "\" (encoded slashes, Windows-style servers),
 * each name cut at ";" (path parameters), "?", "#" or NUL and trimmed of whitespace. Also true when the
 * suffix does not reach a fixed point within MAX_DECODE_ROUNDS.
 */
export function hasDotSegment(suffix: string): boolean {
  const decoded = decodeFully(suffix);
  if (decoded === undefined) return true;
  for (const piece of decoded.split(/[/\\]/)) {
    const name = (piece.split(/[;?#\0]/)[0] ?? "").trim();
    if (name === "." || name === "..") return true;
  }
  return false;
}

/**
 * `text` decoded until nothing changes: `%XX` runs as UTF-8 bytes (overlong forms of ASCII, such as
 * `%c0%ae` for ".", decoded as the lenient servers that accept them would), `%uXXXX`, and Unicode
 * compatibility forms folded (NFKC: a fullwidth "．" or "／" becomes "." or "/"). Undefined when it is still
 * changing after MAX_DECODE_ROUNDS rounds (`%25` nested that deep is no real path).
 */
export function decodeFully(text: string): string | undefined {
  let current = text;
  for (let round = 0; round < MAX_DECODE_ROUNDS; round++) {
    let next = current.replace(ESCAPES, decodeEscapes);
    // biome-ignore lint/suspicious/noControlCharactersInRegex: the ASCII range itself
    if (/[^\u0000-\u007f]/.test(next)) next = next.normalize("NFKC");
    if (next === current) return current;
    current = next;
  }
  return undefined;
}

function decodeEscapes(run: string): string {
  if (run.startsWith("%u")) return String.fromCharCode(Number.parseInt(run.slice(2), 16));
  const bytes: number[] = [];
  for (let i = 0; i < run.length; i += 3) bytes.push(Number.parseInt(run.slice(i + 1, i + 3), 16));
  return decodeUtf8Leniently(bytes);
}

/**
 * UTF-8 as the most lenient decoder would read it: overlong sequences are decoded too (two, three or four
 * bytes for what one byte means); a byte that starts no sequence becomes U+FFFD.
 */
function decodeUtf8Leniently(bytes: number[]): string {
  let out = "";
  let i = 0;
  while (i < bytes.length) {
    const lead = bytes[i] ?? 0;
    const length =
      lead < 0x80
        ? 1
        : lead >= 0xc0 && lead < 0xe0
          ? 2
          : lead >= 0xe0 && lead < 0xf0
            ? 3
            : lead >= 0xf0 && lead < 0xf8
              ? 4
              : 0;
    if (length === 0) {
      out += "\ufffd";
      i += 1;
      continue;
    }
    let code = length === 1 ? lead : lead & (0x7f >> length);
    let valid = true;
    for (let k = 1; k < length; k++) {
      const next = bytes[i + k];
      if (next === undefined || (next & 0xc0) !== 0x80) {
        valid = false;
        break;
      }
      code = (code << 6) | (next & 0x3f);
    }
    if (!valid || code > 0x10ffff || (code >= 0xd800 && code <= 0xdfff)) {
      out += "\ufffd";
      i += 1;
      continue;
    }
    out += String.fromCodePoint(code);
    i += length;
  }
  return out;
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
