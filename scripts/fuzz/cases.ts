/**
 * What the fuzz sends: a plan (key role, path parameters, content type, body: a valid example plus mutations,
 * or something else entirely) generated from a seed, materialized against the batch's fixtures only when sent.
 */
import fc from "fast-check";
import type { RouteSpec } from "#shared/http/route.ts";
import { exampleFor } from "./examples.ts";
import * as values from "./values.ts";

const { expressionString, hostileJson, hostileKey, hugeJson, rawBodyText, weighted, words } = values;
export type WriteRoute = RouteSpec & { operationId: string };
export const WRITE_METHODS = ["POST", "PUT", "PATCH", "DELETE"] as const;

/** Whose key a case sends: tenant A's (whose ids it mostly names) by application, tenant B's, or another. */
const ROLES = words(
  "A.owner|A.management|A.public|A.private|A.session|B.owner|B.private|B.public|root|none|garbage",
);

type ParamChoice = { kind: "own" | "other"; index: number } | { kind: "odd"; value: string };
/** `set` writes the value at the path (a field, or a key added to an object); `delete` removes it. */
export type Mutation = { op: "set"; path: string[]; value: unknown } | { op: "delete"; path: string[] };
/** No body, the route's example mutated (an empty path replaces it all), or raw text (as latin1 bytes). */
type BodyPlan = { kind: "none" } | { kind: "example"; mutations: Mutation[] } | { kind: "raw"; text: string };
export type FuzzCase = ReturnType<typeof caseArbitrary> extends fc.Arbitrary<infer C> ? C : never;
/** Odd path parameters; those with a `/` or `?` reshape the path (a `{proxy+}` takes them whole). */
const ODD_PARAMS = [
  ...words("| |..|%2e%2e|%2F|a%2Fb|%00|%ZZ|%|__proto__|constructor|prototype|toString|hasOwnProperty|null"),
  ...words("undefined|0|-1|tok_|app_x|ü😀|' OR 1=1 --|a b|%F0%9F%98%80|%C0%AF|..%2f..%2fetc%2fpasswd"),
  ...words("a/b/c|../../admin|%2e%2e/%2e%2e|a//b|?x=1"),
  "x".repeat(3000),
];
const CONTENT_TYPES = [
  ...words("application/json|application/merge-patch+json|application/json; charset=utf-16|text/plain"),
  ...words("application/json; charset=latin1|text/html|application/xml|application/x-www-form-urlencoded"),
  ...words("multipart/form-data; boundary=x|application/octet-stream|application/problem+json|;;;|"),
  ...words("APPLICATION/JSON|application/json, text/plain"),
];
/** "default": the type the route documents (merge-patch for PATCH routes, JSON otherwise); null: none. */
const contentType = weighted([12, fc.constant("default")], [4, fc.option(fc.constantFrom(...CONTENT_TYPES))]);

/**
 * Mostly the key most likely to get past authorization, so that validation and the handler see most cases; on
 * token routes also the keys without reveal, whose answers must never carry plaintext; else any.
 */
function keyArbitrary(route: WriteRoute) {
  const tokenRoute = route.group === "proxy" || route.permissions?.some((p) => p.startsWith("token:"));
  const heavy =
    route.auth !== "root" && tokenRoute ? "A.private" : route.auth === "key" ? "A.owner" : route.auth;
  const noReveal = fc.constantFrom("A.public", "A.session");
  return weighted([12, fc.constant(heavy)], [tokenRoute ? 4 : 0, noReveal], [12, fc.constantFrom(...ROLES)]);
}

const fixtureIndex = weighted([3, fc.constant(0)], [2, fc.nat(9)]);
const param = weighted<ParamChoice>(
  [11, fixtureIndex.map((i) => ({ kind: "own", index: i }))],
  [3, fixtureIndex.map((i) => ({ kind: "other", index: i }))],
  [6, fc.constantFrom(...ODD_PARAMS).map((value) => ({ kind: "odd", value }))],
);

const hostile = weighted([18, hostileJson], [2, hugeJson]);
const disclosing = fc.constantFrom("{{ data.number }}", "{{ data | json }}", "{{ data }}");
const isObject = (v: unknown): v is object => v !== null && typeof v === "object" && !Array.isArray(v);
const FIELD = { enumerable: true, writable: true, configurable: true };

/** Every value in `value` (objects and arrays), the root included, with its path. */
function entriesOf(value: unknown, path: string[] = []): [string[], unknown][] {
  const children = value && typeof value === "object" ? Object.entries(value) : [];
  return [[path, value], ...children.flatMap(([key, child]) => entriesOf(child, [...path, key]))];
}

function mutationArbitrary(example: unknown): fc.Arbitrary<Mutation> {
  const entries = entriesOf(example);
  const leaves = entries.flatMap(([p]) => (p.length > 0 ? [p] : []));
  const objects = entries.flatMap(([p, v]) => (isObject(v) ? [p] : []));
  // Where the example holds an expression, another expression: what it reaches is what it may disclose.
  const expressions = entries.flatMap(([p, v]) => (p.length > 0 && String(v).includes("{{") ? [p] : []));
  const expression = fc.oneof(disclosing, disclosing, expressionString);
  // A path to choose from, even where there is none (an option of weight 0 is never chosen, but built).
  const at = (paths: string[][]) => fc.constantFrom(...(paths.length > 0 ? paths : [[]]));
  const set = (path: string[], value: unknown): Mutation => ({ op: "set", path, value });
  return weighted<Mutation>(
    [3, fc.tuple(at(objects), hostileKey, hostile).map(([p, k, v]) => set([...p, k], v))],
    [expressions.length > 0 ? 6 : 0, fc.tuple(at(expressions), expression).map(([p, v]) => set(p, v))],
    [leaves.length > 0 ? 6 : 0, fc.tuple(at(leaves), hostile).map(([p, v]) => set(p, v))],
    [leaves.length > 0 ? 1 : 0, at(leaves).map((path) => ({ op: "delete", path }))],
  );
}

export function caseArbitrary(route: WriteRoute) {
  const names = [...route.path.matchAll(/\{([^}]+)\}/g)].map((m) => m[1] as string);
  const mutation = mutationArbitrary(exampleFor(route) ?? {});
  const body = weighted<BodyPlan>(
    [1, fc.constant({ kind: "none" })],
    [2, hostile.map((value) => ({ kind: "example", mutations: [{ op: "set", path: [], value }] }))],
    [3, rawBodyText.map((text) => ({ kind: "raw", text }))],
    [2, fc.constant({ kind: "example", mutations: [] })],
    // One mutation, so that the rest of the body stays valid and the mutation reaches the handler.
    [14, mutation.map((m) => ({ kind: "example", mutations: [m] }))],
  );
  const proxyKeys = ["own", "own", "own", "other", "none", "garbage", "query"] as const;
  const idempotencyKeys = ["fuzz-1", "fuzz-2", "", "x".repeat(300), "%00", "a b", "\\u0000"];
  return fc.record({
    route: fc.constant(route.operationId),
    key: keyArbitrary(route),
    params: fc.record(Object.fromEntries(names.map((name) => [name, param]))),
    contentType,
    body,
    // Mostly none; else a few keys shared by every route and caller (replays across them), and odd ones.
    idempotencyKey: weighted([7, fc.constant(undefined)], [1, fc.constantFrom(...idempotencyKeys)]),
    // /proxy only: where the proxy key comes from.
    proxyKey: route.group === "proxy" ? fc.constantFrom(...proxyKeys) : fc.constant(undefined),
  });
}

/** The example with the mutations applied, in a deep copy (null-prototype objects: every key stays an own key). */
export function applyMutations(example: unknown, mutations: Mutation[]): unknown {
  const holder: unknown = JSON.parse(JSON.stringify({ root: example ?? {} }), (_k, v: unknown) =>
    isObject(v) ? Object.assign(Object.create(null), v) : v,
  );
  // Own keys only: a path never walks into a prototype.
  const step = (v: unknown, k: string) =>
    v && typeof v === "object" && Object.hasOwn(v, k) ? Reflect.get(v, k) : undefined;
  for (const m of mutations) {
    const path = ["root", ...m.path];
    const key = path.pop() as string;
    const parent = path.reduce<unknown>(step, holder);
    if (parent === null || typeof parent !== "object") continue;
    if (m.op === "delete") Reflect.deleteProperty(parent, key);
    else Object.defineProperty(parent, key, { ...FIELD, value: m.value });
  }
  return (holder as { root: unknown }).root;
}
