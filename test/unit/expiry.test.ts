import { describe, expect, it } from "vitest";
import { parseExpiresAt } from "#shared/domain/tokens/expiry.ts";

const iso = (s: string) => parseExpiresAt(s)?.toISOString();

describe("parseExpiresAt", () => {
  it("reads the DateTime format with an offset", () => {
    expect(iso("12/31/2030 11:59:59 PM +02:00")).toBe("2030-12-31T21:59:59.000Z");
    expect(iso("1/2/2030 12:00:00 AM -05:30")).toBe("2030-01-02T05:30:00.000Z");
    expect(iso("1/2/2030 12:15:00 PM +00:00")).toBe("2030-01-02T12:15:00.000Z");
  });

  it("reads a DateTime without an offset as UTC and a ShortDate as 12 AM UTC", () => {
    expect(iso("7/4/2030 3:04:05 PM")).toBe("2030-07-04T15:04:05.000Z");
    expect(iso("7/4/2030")).toBe("2030-07-04T00:00:00.000Z");
  });

  it("reads ISO 8601, with or without a zone", () => {
    expect(iso("2030-07-04T15:04:05Z")).toBe("2030-07-04T15:04:05.000Z");
    expect(iso("2030-07-04T15:04:05+01:00")).toBe("2030-07-04T14:04:05.000Z");
    expect(iso("2030-07-04T15:04:05")).toBe("2030-07-04T15:04:05.000Z");
    expect(iso("2030-07-04")).toBe("2030-07-04T00:00:00.000Z");
  });

  it.each(["13/1/2030", "2/30/2030", "1/1/2030 13:00:00 PM", "tomorrow", "", "1/1/30", "2030-13-01"])(
    "refuses %j",
    (value) => {
      expect(parseExpiresAt(value)).toBeUndefined();
    },
  );
});
