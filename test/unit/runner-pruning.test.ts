import { describe, expect, it } from "vitest";
import { staleRunnerFunctions } from "#shared/adapters/aws/runner-pruning.ts";

const prefix = "SvcVault-ab12cd-";
const a = "0190f5b2-7c1e-7a3b-8d4e-1f2a3b4c5d6e";
const b = "0190f5b2-7c1e-7a3b-8d4e-aaaaaaaaaaaa";
const now = new Date("2030-01-10T00:00:00Z");
const day = 86_400_000;

describe("staleRunnerFunctions", () => {
  it("keeps each tenant's newest runner and young ones, and never touches other names", () => {
    const stale = staleRunnerFunctions(
      prefix,
      [
        { name: `${prefix}${a}-00000001`, lastModified: "2030-01-01T00:00:00.000+0000" },
        { name: `${prefix}${a}-00000002`, lastModified: "2030-01-05T00:00:00.000+0000" },
        { name: `${prefix}${a}-00000003`, lastModified: "2030-01-09T12:00:00.000+0000" },
        { name: `${prefix}${b}-00000002`, lastModified: "2030-01-05T00:00:00.000+0000" },
        { name: `${prefix}${b}-00000003`, lastModified: "2030-01-09T23:00:00.000+0000" },
        { name: `${prefix}not-a-runner`, lastModified: "2020-01-01T00:00:00.000+0000" },
        { name: `Other-${a}-00000001`, lastModified: "2020-01-01T00:00:00.000+0000" },
      ],
      now,
      day,
    );
    expect(stale).toEqual([`${prefix}${a}-00000001`, `${prefix}${a}-00000002`, `${prefix}${b}-00000002`]);
    expect(staleRunnerFunctions(prefix, [], now, day)).toEqual([]);
  });
});
