/**
 * Hostile values for the fuzz: wrong types, odd strings, prototype keys, expressions, URLs, containers, and
 * plans for bodies too large or too deep to hold as values (written into the body's text when sent).
 * Long lists of short strings are written `|`-separated, one line each.
 */
import fc from "fast-check";

export const words = (text: string) => text.split("|");

/** A JSON object with own keys whatever their names (`__proto__` included): parsed, never assigned. */
export const ownKeys = (entries: [string, unknown][]): Record<string, unknown> =>
  JSON.parse(`{${entries.map(([k, v]) => `${JSON.stringify(k)}:${JSON.stringify(v)}`).join(",")}}`);

/** Property names a careless merge, path walk or map would resolve on Object.prototype. */
const PROTO_NAMES = ["__proto__", "constructor", "prototype"];
const POLLUTED = words("expires_at|mask|session_id|polluted|tenant_id|permissions|data|isAdmin");

export const hostileKey: fc.Arbitrary<string> = fc.oneof(
  { arbitrary: fc.constantFrom(...PROTO_NAMES), weight: 4 },
  {
    arbitrary: fc.constantFrom(
      ...words("__proto__.expires_at|constructor.prototype.polluted|card.__proto__.polluted|a.b|toString"),
      ...words("valueOf|hasOwnProperty|__defineGetter__|| |\u0000|😀|$where|#name|:value|id|tenant_id"),
      ...words("created_by|type"),
      "x".repeat(300),
    ),
    weight: 4,
  },
  { arbitrary: fc.string({ unit: "binary", maxLength: 20 }), weight: 2 },
);

/** `{"__proto__": {...}}` and its cousins, as own keys. */
const protoObject: fc.Arbitrary<unknown> = fc
  .tuple(fc.constantFrom(...PROTO_NAMES), fc.constantFrom(...POLLUTED), fc.constantFrom(0, 1, 2))
  .map(([name, target, shape]) => {
    const value = target === "expires_at" ? "2000-01-01T00:00:00Z" : "polluted-by-fuzz";
    if (shape === 0) return ownKeys([[name, ownKeys([[target, value]])]]);
    if (shape === 1) return ownKeys([["constructor", ownKeys([["prototype", ownKeys([[target, value]])]])]]);
    return ownKeys([[`${name}.${target}`, value]]);
  });

const oddString = fc.constantFrom(
  ...words("| |\u0000|a\u0000b|\ud800|\udfff\ud800|\u202e\u0645\u0631\u062d\u0628\u0627|Z̤͔ͧ̑̓ä͖̭̈̇lͮ̒ͫ|%00|%"),
  ...words(`../../../../etc/passwd|' OR '1'='1|"; DROP TABLE x; --|#{7*7}|<script>alert(1)</script>`),
  ...words("\r\nX-Injected: 1|null|undefined|NaN|-0|1e309|2000-01-01T00:00:00Z|9999-12-31T23:59:59Z"),
  ...words("0000-00-00|not-a-date"),
  "😀".repeat(50),
  // biome-ignore lint/suspicious/noTemplateCurlyInString: a template injection probe, on purpose
  "${process.env}",
);

export const expressionString = fc.constantFrom(
  "{{ data.number }}",
  "{{ data }}",
  "{{ data | json }}",
  "{{ data.number | reveal_last: 4 }}",
  "{{ data.__proto__ }}",
  "{{ data.constructor.constructor }}",
  "{{ constructor.constructor('return process')() }}",
  "{{ this }}",
  "{% for i in (1..100000) %}x{% endfor %}",
  "{% assign x = data %}{{ x }}",
  "{{ 'a' | append: data.number }}",
  "{{ data.number | slice: 0, 99999999 }}",
  "{{ nope | nope }}",
  "{{ token: tok_nonexistent }}",
  ...words("{{|}}|{% raw %}"),
);

const urlString = fc.constantFrom(
  ...words("http://169.254.169.254/latest/meta-data/|http://[fd00:ec2::254]/|http://127.0.0.1:8000/"),
  ...words(
    "http://localhost:3000/tokens|http://0.0.0.0/|http://2130706433/|http://[::1]/|file:///etc/passwd",
  ),
  ...words(
    "https://example.com/|gopher://127.0.0.1:6379/_|javascript:alert(1)|http://user:pass@example.com/",
  ),
  ...words("http://example.com:99999/|ftp://example.com/|http://"),
);

const containerString = fc.constantFrom(
  ...words("|/|//|fuzz|/fuzz|/fuzz/../|/FUZZ/|/__proto__/|/constructor/prototype/|/a b/|/\u0000/|/😀/"),
  `/${"a".repeat(600)}/`,
);

/** One replacement value for a field: anything but what the field expects, mostly. */
export const hostileJson: fc.Arbitrary<unknown> = fc.oneof(
  {
    arbitrary: fc.constantFrom(null, true, false, 0, -1, 0.5, 1e308, -1e308, 2 ** 53 + 1, "", [], {}),
    weight: 5,
  },
  { arbitrary: fc.integer(), weight: 1 },
  { arbitrary: fc.double({ noNaN: true, noDefaultInfinity: true }), weight: 1 },
  { arbitrary: oddString, weight: 4 },
  { arbitrary: fc.string({ unit: "binary", maxLength: 40 }), weight: 3 },
  { arbitrary: fc.string({ maxLength: 40 }), weight: 2 },
  { arbitrary: expressionString, weight: 3 },
  { arbitrary: urlString, weight: 2 },
  { arbitrary: containerString, weight: 2 },
  { arbitrary: fc.array(containerString, { maxLength: 3 }), weight: 2 },
  { arbitrary: protoObject, weight: 4 },
  { arbitrary: fc.jsonValue({ maxDepth: 3 }), weight: 3 },
  { arbitrary: fc.array(fc.constantFrom(null, 1, "x", {}), { minLength: 100, maxLength: 2000 }), weight: 1 },
);

/** Body sizes relative to the route's limit: below, at, just over, far over, over the gateway's 10 MB. */
export type PadSize = "under" | "at" | "over" | "far" | "gateway";
/** Filler units, as JSON text (the multi-byte ones test that the limit counts bytes, not characters). */
const PAD_UNITS = ["a", "é", "😀", "\\u0000", '\\"'] as const;

/** Values written into the body's text when sent: too large or too deep to build as objects. */
export type Marker =
  | { t: "pad"; size: PadSize; unit: (typeof PAD_UNITS)[number] }
  | { t: "nest"; depth: number; shape: "array" | "object" | "proto" };

const weighted = <T>(pairs: [T, number][]) =>
  fc.oneof(...pairs.map(([v, weight]) => ({ arbitrary: fc.constant(v), weight })));

export const marker: fc.Arbitrary<Marker> = fc.oneof(
  fc.record({
    t: fc.constant("pad" as const),
    // A 10 MB body costs the machine: rare.
    size: weighted<PadSize>([
      ["under", 6],
      ["at", 4],
      ["over", 6],
      ["far", 2],
      ["gateway", 1],
    ]),
    unit: fc.constantFrom(...PAD_UNITS),
  }),
  fc.record({
    t: fc.constant("nest" as const),
    depth: fc.constantFrom(8, 32, 33, 63, 64, 65, 100, 1_000, 5_000, 100_000),
    shape: fc.constantFrom("array" as const, "object" as const, "proto" as const),
  }),
);

/** Bodies that are not the JSON the route expects: malformed, scalar, duplicated keys, odd encodings. */
export const rawBodyText = fc.constantFrom(
  ...words(
    `{|{"a":|}|[|null|[]|"str"|0|true|1e99999|-|NaN|Infinity|{'a':1}|{"a":1,"a":2}|\ufeff{}|{} trailing`,
  ),
  ...words(`{"type":"card","type":"bank"}|{}{}|\u0000|{"a":"\\ud800"}|{"a":"\\u0000"}|a=1&b=2|<xml/>| `),
  ...words(
    `{"__proto__":{"expires_at":"2000-01-01T00:00:00Z"}}|{"constructor":{"prototype":{"polluted":"yes"}}}`,
  ),
  '{"__proto__":null}',
  "1".repeat(5000),
  `{"a":${"1".repeat(400)}}`,
);
