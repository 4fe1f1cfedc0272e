import { describe, expect, it } from "vitest";
import { nullObject } from "#shared/domain/safe-keys.ts";
import { headerCollection, withSecurityHeaders } from "#shared/http/security-headers.ts";

describe("withSecurityHeaders", () => {
  it("adds the security headers and the defaults to an answer of the API's own headers", () => {
    const headers = withSecurityHeaders({ "content-type": "application/json", vary: "Origin" });
    expect(headers).toEqual({
      "content-type": "application/json",
      vary: "Origin",
      "x-content-type-options": "nosniff",
      "content-security-policy": "sandbox",
      "cache-control": "no-store",
      "cross-origin-resource-policy": "same-origin",
    });
  });

  it("replaces a destination's security headers in any case, keeps its caching, and keeps `__proto__` an ordinary key", () => {
    const given = nullObject<string>();
    given["Content-Security-Policy"] = "script-src *";
    given["X-Content-Type-Options"] = "none";
    given["Cache-Control"] = "max-age=60";
    Object.defineProperty(given, "__proto__", {
      value: "x",
      enumerable: true,
      writable: true,
      configurable: true,
    });
    const headers = withSecurityHeaders(given);
    expect(Object.getPrototypeOf(headers)).toBeNull();
    expect(Object.hasOwn(headers, "__proto__")).toBe(true);
    expect(Object.getOwnPropertyDescriptor(headers, "__proto__")?.value).toBe("x");
    expect({ ...headers }).toMatchObject({
      "Cache-Control": "max-age=60",
      "content-security-policy": "sandbox",
      "x-content-type-options": "nosniff",
      "cross-origin-resource-policy": "same-origin",
    });
    expect(headers).not.toHaveProperty("Content-Security-Policy");
    expect(headers).not.toHaveProperty("cache-control");
    // Nothing reached Object.prototype.
    expect(({} as Record<string, unknown>).x).toBeUndefined();
  });
});

describe("headerCollection", () => {
  it("is an ordinary object only for the API's own names, else a null-prototype map", () => {
    expect(Object.getPrototypeOf(headerCollection({ "content-type": "a", "svc-request-id": "b" }))).toBe(
      Object.prototype,
    );
    expect(Object.getPrototypeOf(headerCollection(undefined))).toBe(Object.prototype);
    expect(Object.getPrototypeOf(headerCollection({ "content-type": "a", "x-destination": "b" }))).toBeNull();
    expect(Object.getPrototypeOf(headerCollection({ "Content-Type": "a" }))).toBeNull();
  });
});
