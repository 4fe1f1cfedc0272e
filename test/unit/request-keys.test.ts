import { describe, expect, it } from "vitest";
import { bodyProblem, forbiddenKeyPath, jsonTextDepth, MAX_JSON_DEPTH } from "#shared/domain/json-guard.ts";
import { mergePatch } from "#shared/domain/merge-patch.ts";
import { validateArgs } from "#shared/domain/reactors/args.ts";
import { hasForbiddenSegment, namesForbiddenKey } from "#shared/domain/safe-keys.ts";
import { parseJsonBody, parseQuery } from "#shared/http/middleware/route-and-validate.ts";

const nested = (levels: number) => `${"[".repeat(levels)}${"]".repeat(levels)}`;

describe("request keys never reach the prototype machinery", () => {
  it("names the reserved segments of dotted paths and of expression text", () => {
    expect(hasForbiddenSegment("__proto__.expires_at")).toBe(true);
    expect(hasForbiddenSegment("a.constructor.prototype")).toBe(true);
    expect(hasForbiddenSegment("user.address.city")).toBe(false);
    expect(namesForbiddenKey("$['__proto__']")).toBe(true);
    expect(namesForbiddenKey("data.prototypes")).toBe(false);
  });

  it("merge patch builds null-prototype objects and refuses reserved keys", () => {
    const merged = mergePatch({ a: { b: 1 } }, { a: { c: 2 }, d: null }) as Record<string, unknown>;
    expect(merged).toEqual({ a: { b: 1, c: 2 } });
    expect(Object.getPrototypeOf(merged)).toBeNull();
    expect(Object.getPrototypeOf(merged.a)).toBeNull();
    expect(() => mergePatch({}, JSON.parse('{"__proto__":{"polluted":1}}'))).toThrow(TypeError);
    expect(() => mergePatch({}, { constructor: { prototype: { polluted: 1 } } })).toThrow(TypeError);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it("validateArgs refuses reserved parameter segments and writes only own properties", () => {
    const attack = JSON.parse('{"__proto__":{"expires_at":"2000-01-01T00:00:00Z"}}');
    const result = validateArgs(attack, [{ name: "__proto__.expires_at", type: "string" }]);
    expect(result.ok).toBe(false);
    expect(({} as Record<string, unknown>).expires_at).toBeUndefined();
    const ok = validateArgs({ user: { city: "Oslo" } }, [{ name: "user.city", type: "string" }]);
    expect(ok).toEqual({ ok: true, args: { user: { city: "Oslo" } } });
  });

  it("measures JSON depth on the text, strings and escapes included, without recursion", () => {
    expect(jsonTextDepth('{"a":[1,{"b":"[[[\\"{{"}]}')).toBe(3);
    expect(jsonTextDepth(nested(1_000_000), MAX_JSON_DEPTH)).toBe(MAX_JSON_DEPTH + 1);
    expect(() => parseJsonBody(nested(MAX_JSON_DEPTH))).not.toThrow();
    expect(() => parseJsonBody(nested(MAX_JSON_DEPTH + 1))).toThrow(/deeper than 64/);
  });

  it("finds reserved keys at any depth and refuses them in bodies and query names", () => {
    expect(forbiddenKeyPath(JSON.parse('{"a":[{"b":{"__proto__":1}}]}'))).toBe("a.0.b.__proto__");
    expect(forbiddenKeyPath({ a: [{ prototypes: 1 }] })).toBeUndefined();
    // A number beyond a double parses as Infinity (stored as null): refused where it is, as a reserved key is.
    expect(bodyProblem(JSON.parse('{"a":[1, -1e400]}'))).toEqual({ path: "a.1", kind: "non-finite-number" });
    expect(bodyProblem(JSON.parse("1e999"))).toEqual({ path: "body", kind: "non-finite-number" });
    // JSON.parse rounds an integer of 2^53 or more to another one: refused rather than stored as another value.
    expect(bodyProblem(JSON.parse('{"a":{"b":12345678901234567891}}'))).toEqual({
      path: "a.b",
      kind: "inexact-number",
    });
    expect(bodyProblem(JSON.parse('{"a":-9007199254740992}'))).toEqual({ path: "a", kind: "inexact-number" });
    expect(
      bodyProblem(JSON.parse('{"a":[9007199254740991, -9007199254740991, 0.1, 1e-300]}')),
    ).toBeUndefined();
    expect(() => parseJsonBody('{"data":{"constructor":{}}}')).toThrow(/reserved key/);
    expect(() => parseQuery("__proto__=a&__proto__=b")).toThrow(/query string/);
    expect(() => parseQuery("metadata.constructor=x")).toThrow(/query string/);
    const query = parseQuery("a=1&a=2&b=3");
    expect(Object.getPrototypeOf(query)).toBeNull();
    expect({ ...query }).toEqual({ a: ["1", "2"], b: "3" });
  });
});

describe("process hardening", () => {
  it("test workers run as production does: Object.prototype.__proto__ throws", () => {
    expect(process.execArgv).toContain("--disable-proto=throw");
    expect(() => Reflect.get({}, "__proto__")).toThrow(expect.objectContaining({ code: "ERR_PROTO_ACCESS" }));
    // JSON.parse still makes an own "__proto__" member (refused at the edge), never a prototype.
    expect(Object.getPrototypeOf(JSON.parse('{"__proto__":{"x":1}}'))).toBe(Object.prototype);
  });
});
