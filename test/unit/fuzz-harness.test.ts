import fc from "fast-check";
import { afterEach, describe, expect, it } from "vitest";
import { routeList } from "#shared/api/index.ts";
import { applyMutations, caseArbitrary, WRITE_METHODS, type WriteRoute } from "../../scripts/fuzz/cases.ts";
import { checkAnswer, prototypeSnapshot, takePollution } from "../../scripts/fuzz/check.ts";
import { luhnNumber } from "../../scripts/fuzz/world.ts";

const problem = (status: number) => ({
  status,
  contentType: "application/problem+json",
  text: JSON.stringify({ type: "https://svc-vault.dev/problems/x", title: "X", status, detail: "d" }),
});
const kinds = (answer: Parameters<typeof checkAnswer>[0], requestText = "") =>
  checkAnswer(answer, { requestText }).map((v) => v.kind);

describe("fuzz checker (scripts/fuzz/check.ts)", () => {
  it("accepts problem+json 4xx and refuses 5xx, bare 4xx, wrong status and stack frames", () => {
    expect(kinds(problem(400))).toEqual([]);
    expect(kinds(problem(500))).toContain("5xx");
    expect(kinds({ status: 404, contentType: "application/json", text: "{}" })).toEqual(["not-problem-json"]);
    expect(kinds({ ...problem(400), status: 409 })).toEqual(["bad-problem"]);
    const trace = "Error: x\n    at parse (/srv/app/shared/http/lambda.ts:12:7)";
    expect(kinds({ status: 200, contentType: "text/plain", text: trace })).toEqual(
      expect.arrayContaining(["stack-trace", "host-path"]),
    );
  });

  it("does not count what the request itself carried as a leak", () => {
    expect(kinds({ status: 200, contentType: "application/json", text: '{"a":"x.ts:1"}' }, "x.ts:1")).toEqual(
      [],
    );
  });

  it("flags a full card number the caller may not see, and /proxy errors not wrapped in proxy_error", () => {
    const secrets = [{ value: "4111111111111111", whose: "tenant A's" }];
    const leak = { status: 200, contentType: "application/json", text: '{"number":"4111111111111111"}' };
    expect(checkAnswer(leak, { requestText: "", secrets }).map((v) => v.kind)).toEqual(["disclosure"]);
    const wrapped = { ...problem(401), contentType: "application/json" };
    wrapped.text = JSON.stringify({ proxy_error: JSON.parse(problem(401).text) });
    expect(checkAnswer(wrapped, { requestText: "", proxy: true })).toEqual([]);
    expect(checkAnswer(problem(401), { requestText: "", proxy: false })).toEqual([]);
  });

  it("takes a /proxy answer about the tenant's side (its code, its destination) as no 5xx, and nothing else", () => {
    const proxied = (status: number, type: string) => ({
      status,
      contentType: "application/json",
      text: JSON.stringify({ proxy_error: { type: `https://svc-vault.dev/problems/${type}`, status } }),
    });
    const fiveXx = (answer: ReturnType<typeof proxied>, proxy: boolean) =>
      checkAnswer(answer, { requestText: "", proxy }).map((v) => v.kind);
    expect(fiveXx(proxied(500, "transform-failed"), true)).toEqual([]);
    expect(fiveXx(proxied(502, "unreachable"), true)).toEqual([]);
    expect(fiveXx(proxied(504, "timeout"), true)).toEqual([]);
    expect(fiveXx(proxied(502, "response_too_large"), true)).toEqual(["5xx"]);
    expect(fiveXx(proxied(500, "unreachable"), true)).toEqual(["5xx"]);
    expect(fiveXx(proxied(502, "unreachable"), false)).toEqual(["5xx"]);
  });
});

describe("prototype watch", () => {
  const baseline = prototypeSnapshot();
  afterEach(() => takePollution(baseline));

  it("sees a property added to Object.prototype and removes it", () => {
    Object.defineProperty(Object.prototype, "fuzzPolluted", { value: 1, configurable: true });
    expect(takePollution(baseline)).toEqual(["Object.prototype.fuzzPolluted"]);
    expect(Object.hasOwn(Object.prototype, "fuzzPolluted")).toBe(false);
    expect(takePollution(baseline)).toEqual([]);
  });
});

describe("fuzz generator (scripts/fuzz/cases.ts)", () => {
  it("keeps prototype keys as own keys, in a copy, and walks no prototype", () => {
    const example = { data: { a: 1 } };
    const body = applyMutations(example, [
      { op: "set", path: ["data", "__proto__"], value: { polluted: 1 } },
      { op: "set", path: ["data", "a"], value: [[1]] },
      { op: "set", path: ["data", "toString", "x"], value: 1 },
      { op: "delete", path: ["data", "missing"] },
    ]);
    expect(JSON.stringify(body)).toBe('{"data":{"a":[[1]],"__proto__":{"polluted":1}}}');
    expect(example).toEqual({ data: { a: 1 } });
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it("makes Luhn-valid fixture card numbers", () => {
    expect(luhnNumber("424242424242424")).toBe("4242424242424242");
    expect(luhnNumber("411111111111111")).toBe("4111111111111111");
  });

  it("generates the same cases from the same seed, for every write route of the table", () => {
    const routes = routeList.filter((r) =>
      (WRITE_METHODS as readonly string[]).includes(r.method),
    ) as WriteRoute[];
    expect(routes.length).toBeGreaterThan(30);
    for (const route of routes) {
      const first = fc.sample(caseArbitrary(route), { seed: 7, numRuns: 3 });
      expect(JSON.stringify(first)).toBe(
        JSON.stringify(fc.sample(caseArbitrary(route), { seed: 7, numRuns: 3 })),
      );
      expect(first.every((c) => c.route === route.operationId)).toBe(true);
    }
  });
});
