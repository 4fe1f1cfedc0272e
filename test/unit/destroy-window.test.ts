import { describe, expect, it } from "vitest";
import {
  destroyableFrom,
  noLongerCurrentAt,
  SHORT_LIVED_SEALED_SECONDS,
} from "#shared/domain/keys/destroy-window.ts";

const DAY = 86_400_000;
const periodStart = (version: number) => new Date(version * 30 * DAY);

describe("when a data-key version may be destroyed", () => {
  it("a period's version stops being current when the next period starts, with no rotation", () => {
    expect(
      noLongerCurrentAt(700, [{ keyId: "k700", createdAt: "2027-01-01T00:00:00Z" }], periodStart),
    ).toEqual(periodStart(701));
  });

  it("a rotation ends it earlier: the later version's counted key was made then", () => {
    const rotatedAt = new Date(700 * 30 * DAY + 5 * DAY).toISOString();
    const records = [
      { keyId: "k700" },
      { keyId: "k701", createdAt: rotatedAt },
      { keyId: "hmac2", createdAt: "1970-01-01T00:00:00Z" },
    ];
    expect(noLongerCurrentAt(700, records, periodStart).toISOString()).toBe(rotatedAt);
    expect(destroyableFrom(700, records, periodStart).getTime()).toBe(
      Date.parse(rotatedAt) + SHORT_LIVED_SEALED_SECONDS * 1000,
    );
  });

  it("outlives the longest-kept short-lived sealed value (a day) and a warm process's cached key state", () => {
    expect(SHORT_LIVED_SEALED_SECONDS).toBeGreaterThan(24 * 3600);
  });
});
