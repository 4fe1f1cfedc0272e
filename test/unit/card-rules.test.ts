import { describe, expect, it } from "vitest";
import {
  cardBrand,
  checkCvc,
  checkExpiry,
  checkNumber,
  formatExpiry,
  formatNumber,
  luhnValid,
} from "../../elements/src/card-rules.ts";

describe("card rules (inside the Elements frame)", () => {
  it("detects brands from the first digits", () => {
    expect(cardBrand("4242")).toBe("visa");
    expect(cardBrand("5555")).toBe("mastercard");
    expect(cardBrand("2221")).toBe("mastercard");
    expect(cardBrand("3782")).toBe("american-express");
    expect(cardBrand("6011")).toBe("discover");
    expect(cardBrand("3530")).toBe("jcb");
    expect(cardBrand("3056")).toBe("diners-club");
    expect(cardBrand("")).toBe("unknown");
  });

  it("checks Luhn and lengths per brand", () => {
    expect(luhnValid("4242424242424242")).toBe(true);
    expect(luhnValid("4242424242424241")).toBe(false);
    expect(checkNumber("4242 4242 4242 4242")).toMatchObject({ valid: true, complete: true, brand: "visa" });
    expect(checkNumber("4242 4242")).toMatchObject({ valid: false, complete: false });
    expect(checkNumber("378282246310005")).toMatchObject({ valid: true, brand: "american-express" });
    expect(checkNumber("4242424242424241").error).toBe("The card number is invalid.");
    expect(checkNumber("")).toMatchObject({ empty: true, valid: false });
  });

  it("marks a number shorter than 16 digits provisional, Luhn-valid or not: the page is not told which while typing", () => {
    // The first 13 digits of two valid 16-digit Visas: one prefix passes Luhn, the other not (front-end review).
    expect(checkNumber("4012888888881")).toMatchObject({ valid: true, provisional: true });
    expect(checkNumber("4111111111111")).toMatchObject({ valid: false, provisional: true });
    expect(checkNumber("4012888888881881")).not.toHaveProperty("provisional");
    // A brand whose longest number is shorter than 16 is settled at it.
    expect(checkNumber("378282246310005")).not.toHaveProperty("provisional");
  });

  it("masks as typed: groups by brand, MM / YY", () => {
    expect(formatNumber("4242424242424242")).toBe("4242 4242 4242 4242");
    expect(formatNumber("378282246310005")).toBe("3782 822463 10005");
    expect(formatNumber("4242x4242-4242 4242 99999")).toBe("4242 4242 4242 4242 999");
    expect(formatExpiry("1234")).toBe("12 / 34");
    expect(formatExpiry("5")).toBe("05");
  });

  it("checks expiry against now (valid through its month) and cvc length per brand", () => {
    const now = new Date("2026-11-26T00:00:00Z");
    expect(checkExpiry("11 / 26", now).valid).toBe(true);
    expect(checkExpiry("10 / 26", now)).toMatchObject({ valid: false, error: "The card has expired." });
    expect(checkExpiry("13 / 30", now).error).toBe("The expiration month is invalid.");
    expect(checkExpiry("12 / 9", now)).toMatchObject({ complete: false, valid: false });
    expect(checkCvc("123", "4242424242424242").valid).toBe(true);
    expect(checkCvc("123", "378282246310005").valid).toBe(false);
    expect(checkCvc("1234", "378282246310005").valid).toBe(true);
  });
});
