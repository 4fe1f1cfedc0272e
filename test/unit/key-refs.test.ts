import { describe, expect, it } from "vitest";
import {
  commitDelta,
  hashVersionOf,
  hmacKeyId,
  keyRefDelta,
  keyRefsOf,
  keySetKeys,
  keySetOf,
  rollbackDelta,
  sumDeltas,
  versionedHash,
} from "#shared/domain/keys/key-refs.ts";

const token = (key: string, hmac: number, search: number[] = []) => ({
  sealed_data: `v1.${key}.iv.tag.body`,
  fingerprint: versionedHash(hmac, "fp"),
  search_hashes: search.map((v) => versionedHash(v, `s${v}`)),
});

describe("key refs (which keys a token needs)", () => {
  it("names the data key and every HMAC version its hashes use; version 1 hashes stay bare", () => {
    expect(versionedHash(1, "abc")).toBe("abc");
    expect(hashVersionOf("abc")).toBe(1);
    expect(hashVersionOf(versionedHash(12, "a-b_c"))).toBe(12);
    expect(hmacKeyId(1)).toBe("fingerprint");
    expect(keyRefsOf(token("k690", 1, [2]))).toEqual(["fingerprint", "hmac2", "k690"]);
  });

  it("counts a write by the key set the token stops and starts needing: one counter each", () => {
    const before = token("k690", 1, [1]);
    const after = token("k691", 2, [2]);
    expect(keySetOf(after)).toBe("hmac2+k691");
    expect(keySetKeys("hmac2+k691")).toEqual(["hmac2", "k691"]);
    expect(keySetKeys("k690")).toEqual(["k690"]);
    expect(Object.fromEntries(keyRefDelta(undefined, before))).toEqual({ "fingerprint+k690": 1 });
    expect(Object.fromEntries(keyRefDelta(before, after))).toEqual({
      "fingerprint+k690": -1,
      "hmac2+k691": 1,
    });
    expect(keyRefDelta(before, token("k690", 1))).toEqual(new Map());
    expect(Object.fromEntries(keyRefDelta(before, undefined))).toEqual({ "fingerprint+k690": -1 });
  });

  it("sums the writes of one transaction, leaving out what cancels", () => {
    const sum = sumDeltas([
      keyRefDelta(undefined, token("k1", 1)),
      keyRefDelta(token("k1", 1), token("k2", 1)),
    ]);
    expect(Object.fromEntries(sum)).toEqual({ "fingerprint+k2": 1 });
  });

  it("in a transaction: staging reserves the new keys, the commit releases the old, a rollback the reserved", () => {
    const before = ["fingerprint", "k1"];
    const after = ["hmac2", "k2"];
    expect(Object.fromEntries(commitDelta(before, after))).toEqual({ fingerprint: -1, k1: -1 });
    expect(Object.fromEntries(rollbackDelta(before, after))).toEqual({ hmac2: -1, k2: -1 });
    // A create (nothing before) commits without change and rolls back its token; a delete the other way.
    expect(commitDelta([], after)).toEqual(new Map());
    expect(Object.fromEntries(rollbackDelta([], after))).toEqual({ hmac2: -1, k2: -1 });
    expect(Object.fromEntries(commitDelta(before, []))).toEqual({ fingerprint: -1, k1: -1 });
    expect(rollbackDelta(before, [])).toEqual(new Map());
  });
});
