import { IncomingMessage } from "node:http";
import { Socket } from "node:net";
import { describe, expect, it } from "vitest";
import { isForbiddenHeaderName } from "#shared/domain/safe-keys.ts";
import { HEADER_LINE_METHODS, installSafeHeaders } from "#shared/http/safe-headers.ts";

type AddHeaderLine = (field: string, value: string, dest: Record<string, unknown>) => void;

const message = () => new IncomingMessage(new Socket());
const method = (name: string) =>
  (IncomingMessage.prototype as unknown as Record<string, AddHeaderLine>)[name] as AddHeaderLine;

describe("safe-headers", () => {
  it("patches both header-line methods this Node has (Node 20 and 24 define both)", () => {
    expect(process.execArgv).toContain("--disable-proto=throw");
    expect(installSafeHeaders()).toEqual([...HEADER_LINE_METHODS]);
    expect(installSafeHeaders()).toEqual([...HEADER_LINE_METHODS]); // idempotent: no double wrapping
  });

  it("drops a `__proto__` line (any case) on an ordinary object instead of throwing, keeps the others", () => {
    const msg = message();
    const dest: Record<string, unknown> = {};
    for (const [field, value] of [
      ["Content-Type", "text/plain"],
      ["__proto__", "x"],
      ["__PROTO__", "y"],
      ["X-Kept", "a"],
      ["x-kept", "b"],
    ] as const)
      method("_addHeaderLine").call(msg, field, value, dest);

    expect(Object.getPrototypeOf(dest)).toBe(Object.prototype);
    expect(Object.keys(dest)).toEqual(["content-type", "x-kept"]);
    expect(dest["x-kept"]).toBe("a, b");
  });

  it("parses raw header lines through the public getters without a `__proto__` entry", () => {
    const msg = message();
    (msg as unknown as { _addHeaderLines(h: string[], n: number): void })._addHeaderLines(
      ["__proto__", "x", "Accept", "*/*"],
      4,
    );
    expect(msg.headers).toEqual({ accept: "*/*" });
    expect(Object.keys(msg.headersDistinct)).toEqual(["accept"]);
  });

  it("names only `__proto__` as forbidden", () => {
    expect(isForbiddenHeaderName("__Proto__")).toBe(true);
    expect(isForbiddenHeaderName("prototype")).toBe(false);
    expect(isForbiddenHeaderName("constructor")).toBe(false);
    expect(isForbiddenHeaderName("x-__proto__")).toBe(false);
    expect(isForbiddenHeaderName("__proto_")).toBe(false);
  });
});
