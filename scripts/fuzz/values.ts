/**
 * Hostile values: wrong types, odd strings, prototype keys, expressions, URLs, containers, and values too large or
 * too deep for the service's limits. Lists of short strings are `|`-separated (`~` where they hold `|`).
 */
import fc from "fast-check";

export const words = (text: string, separator = "|") => text.split(separator);
/** fc.oneof with the weight first, so that each option takes one line. */
export const weighted = <T>(...options: [number, fc.Arbitrary<T>][]) =>
  fc.oneof(...options.map(([weight, arbitrary]) => ({ weight, arbitrary })));

/** Property names a careless merge, path walk or map would resolve on Object.prototype. */
const PROTO_NAMES = ["__proto__", "constructor", "prototype"];
const POLLUTED = words("expires_at|mask|session_id|polluted|tenant_id|permissions|data|isAdmin");
const ODD_KEYS = [
  ...words(
    "__proto__.expires_at|constructor.prototype.polluted|card.__proto__.polluted|a.b|toString|valueOf",
  ),
  ...words("hasOwnProperty|__defineGetter__|| |\u0000|😀|$where|#name|:value|id|tenant_id|type|created_by"),
  "x".repeat(300),
];
export const hostileKey = weighted<string>(
  [4, fc.constantFrom(...PROTO_NAMES)],
  [4, fc.constantFrom(...ODD_KEYS)],
  [2, fc.string({ unit: "binary", maxLength: 20 })],
);

/**
 * `{"__proto__": {...}}`, `{"constructor": {"prototype": {...}}}` and `{"__proto__.x": ...}`: parsed, so that
 * every key is an own key, whatever its name.
 */
const protoObject = fc
  .tuple(fc.constantFrom(...PROTO_NAMES), fc.constantFrom(...POLLUTED), fc.nat(2))
  .map(([name, target, shape]): unknown => {
    const v = target === "expires_at" ? '"2000-01-01T00:00:00Z"' : '"polluted-by-fuzz"';
    const nested = [`{"${name}":{"${target}":${v}}}`, `{"constructor":{"prototype":{"${target}":${v}}}}`];
    return JSON.parse([...nested, `{"${name}.${target}":${v}}`][shape] as string);
  });
const oddString = fc.constantFrom(
  ...words("| |\u0000|a\u0000b|\ud800|\udfff\ud800|\u202e\u0645\u0631\u062d\u0628\u0627|Z̤͔ͧ̑̓ä͖̭̈̇lͮ̒ͫ|%00|%"),
  ...words(`../../../../etc/passwd|' OR '1'='1|"; DROP TABLE x; --|#{7*7}|<script>alert(1)</script>`),
  ...words("\r\nX-Injected: 1|null|undefined|NaN|-0|1e309|2000-01-01T00:00:00Z|9999-12-31T23:59:59Z"),
  ...words(`0000-00-00|not-a-date|\${process.env}`), // a template injection probe
  "😀".repeat(50),
  // URLs: the metadata service, loopback and private addresses, other schemes, credentials, a bad port.
  ...words("http://169.254.169.254/latest/meta-data/|http://[fd00:ec2::254]/|http://127.0.0.1:8000/|http://"),
  ...words(
    "http://localhost:3000/tokens|http://0.0.0.0/|http://2130706433/|http://[::1]/|file:///etc/passwd",
  ),
  ...words("https://example.com/|gopher://127.0.0.1:6379/_|javascript:alert(1)|http://user:pass@x.com/"),
  ...words("http://example.com:99999/|ftp://example.com/"),
);
export const expressionString = fc.constantFrom(
  ...words("{{ data.number }}~{{ data }}~{{ data | json }}~{{ data.number | reveal_last: 4 }}", "~"),
  ...words("{{ data.__proto__ }}~{{ data.constructor.constructor }}~{{ this }}~{{ nope | nope }}", "~"),
  ...words("{{ constructor.constructor('return process')() }}~{% for i in (1..100000) %}x{% endfor %}", "~"),
  ...words("{% assign x = data %}{{ x }}~{{ 'a' | append: data.number }}~{{~}}~{% raw %}", "~"),
  ...words("{{ data.number | slice: 0, 99999999 }}~{{ token: tok_nonexistent }}", "~"),
);
const containerString = fc.constantFrom(
  ...words("|/|//|fuzz|/fuzz|/fuzz/../|/FUZZ/|/__proto__/|/constructor/prototype/|/a b/|/\u0000/|/😀/"),
  `/${"a".repeat(600)}/`,
);
/** One replacement value for a field: anything but what the field expects, mostly. */
export const hostileJson = weighted<unknown>(
  [5, fc.constantFrom(null, true, false, 0, -1, 0.5, 1e308, -1e308, 2 ** 53 + 1, "", [], {})],
  [2, fc.oneof(fc.integer(), fc.double({ noNaN: true, noDefaultInfinity: true }))],
  [6, oddString],
  [5, fc.oneof(fc.string({ unit: "binary", maxLength: 40 }), fc.string({ maxLength: 40 }))],
  [3, expressionString],
  [4, fc.oneof(containerString, fc.array(containerString, { maxLength: 3 }))],
  [4, protoObject],
  [3, fc.jsonValue({ maxDepth: 3 })],
  [1, fc.array(fc.constantFrom(null, 1, "x", {}), { minLength: 100, maxLength: 2000 })],
);

/**
 * Strings from 1 KB to over the gateway's 10 MB, across DynamoDB's 400 KB item and the 1 MiB and 5.5 MiB body
 * limits, in units of 1, 2 and 4 bytes (the limits count bytes); arrays, objects and `__proto__` keys nested
 * around DynamoDB's 32 levels and the body's 64. Built once each: cases share them.
 */
const built = new Map<string, unknown>();
const once = (id: string, make: () => unknown) => built.get(id) ?? built.set(id, make()).get(id);
const bigString = fc
  .tuple(fc.constantFrom(1e3, 3.9e5, 4.2e5, 1.05e6, 5.8e6, 1.06e7), fc.constantFrom("a", "é", "😀"))
  .map(([bytes, unit]) => once(bytes + unit, () => unit.repeat(bytes / Buffer.byteLength(unit))));
const nested = fc
  .tuple(fc.constantFrom(8, 32, 33, 63, 64, 65, 100, 1_000), fc.constantFrom("[", '{"a":', '{"__proto__":'))
  .map(([depth, open]): unknown =>
    JSON.parse(`${open.repeat(depth)}1${(open === "[" ? "]" : "}").repeat(depth)}`),
  );
export const hugeJson = fc.oneof(bigString, nested);

/**
 * Bodies that are not the JSON the route expects, as bytes written as latin1 text: malformed, scalar,
 * duplicated keys, a BOM, invalid UTF-8 (a lone continuation byte, an overlong `/`, an encoded surrogate).
 */
export const rawBodyText = fc.constantFrom(
  ...words(`{|{"a":|}|[|null|[]|"str"|0|true|1e99999|-|NaN|Infinity|{'a':1}|{"a":1,"a":2}|\xef\xbb\xbf{}`),
  ...words(`{"type":"card","type":"bank"}|{}{}|\u0000|{"a":"\\ud800"}|{"a":"\\u0000"}|a=1&b=2|<xml/>| `),
  ...words(`\xff\xfe{}|{"a":"\x80"}|\xc0\xaf|{"a":"\xed\xa0\x80"}|{"__proto__":null}|{} trailing`),
  ...words('{"__proto__":{"expires_at":"2000-01-01T00:00:00Z"}}|{"constructor":{"prototype":{"x":1}}}'),
  "1".repeat(5000),
  `{"a":${"1".repeat(400)}}`,
);
