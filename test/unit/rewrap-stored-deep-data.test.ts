/**
 * Review s54-b: fe66865 made sealData refuse data nested deeper than 64 levels, and a rewrap seals every token's
 * data again through sealData. Data a reactor stored deeper before that (the case the commit closed) was then
 * refused at every rewrap (a DomainError "invalid", taken for an expression that no longer renders: skipped) and
 * left under its old key versions for good. A re-seal is not a write of new data: the write's limits are not asked
 * of it again.
 */
import { describe, expect, it } from "vitest";
import { MAX_JSON_DEPTH } from "#shared/domain/json-guard.ts";
import { dataKeyId } from "#shared/domain/keys/key-refs.ts";
import { processRewrapPage, type RewrapDeps } from "#shared/domain/keys/rewrap.ts";
import { createToken } from "#shared/domain/tokens/create.ts";
import { sealData } from "#shared/domain/tokens/sealing.ts";
import type { RewrapJob } from "#shared/ports/key-versions.ts";
import { tokenTenant } from "#test/support/fakes.ts";

const deep = (depth: number) => {
  let data: unknown = "x";
  for (let i = 0; i < depth; i++) data = { a: data };
  return data;
};

describe("review s54-b: a rewrap re-seals data stored before the depth limit", () => {
  it("sealData holds written data to the limit, not a stored token's own data", async () => {
    const { deps, tenantId } = tokenTenant();
    const data = deep(MAX_JSON_DEPTH + 1);
    await expect(sealData(deps, tenantId, "t", "token", data)).rejects.toThrow(/too large/);
    await expect(sealData(deps, tenantId, "t", "token", data, { stored: true })).resolves.toHaveProperty(
      "sealed_data",
    );
  });

  it("a token whose stored data nests 65 levels is re-sealed under the current key, not skipped", async () => {
    const { deps, tenantId, tokens, clock, reader } = tokenTenant();
    // 26 tokens: the page (25) is not the job's last, so the worker only advances the job and sends the next.
    for (let i = 0; i < 26; i++) await createToken(deps, reader, { type: "token", data: { n: i } });
    const newest = (await tokens.page(tenantId, { now: clock.now() }, 1, undefined)).items[0];
    if (!newest) throw new Error("no token");
    // As a reactor's tokenize block stored it before fe66865: 65 levels deep.
    const legacy = {
      ...newest,
      sealed_data: await deps.sealer.seal(
        { tenantId, tokenId: newest.id, field: "data" },
        JSON.stringify(deep(MAX_JSON_DEPTH + 1)),
      ),
    };
    (tokens as unknown as { tokens: Map<string, unknown> }).tokens.forEach((t, key, map) => {
      if ((t as { id: string }).id === newest.id) map.set(key, legacy);
    });
    const before = legacy.sealed_data.split(".")[1];
    // A rotation period later: every token is under an older data-key version.
    clock.advance(31 * 86_400);
    const job: RewrapJob = {
      id: "job",
      tenant_id: tenantId,
      status: "running",
      total: 26,
      done: 0,
      skipped: 0,
      page: 0,
      sent: 0,
      created_at: clock.now().toISOString(),
    };
    let progress: { skipped: number; done: number } | undefined;
    const rewrapDeps = {
      ...deps,
      keyState: { evict() {} },
      keyring: { currentVersion: async () => Math.floor(clock.now().getTime() / (30 * 86_400_000)) },
      keyVersions: { state: async () => ({ hmacVersion: 1, hmacLive: [1], dataVersion: 0 }) },
      rewrapJobs: {
        get: async () => job,
        advance: async (_t: string, _id: string, _page: number, p: { skipped: number; done: number }) => {
          progress = p;
          return true;
        },
        markSent: async () => {},
      },
      rewrapQueue: { enqueue: async () => {} },
    } as unknown as RewrapDeps;
    await processRewrapPage(rewrapDeps, { kind: "rewrap", tenantId, jobId: job.id, page: 0 });
    expect(progress?.skipped).toBe(0);
    const after = await tokens.get(tenantId, newest.id);
    expect(after?.sealed_data.split(".")[1]).not.toBe(before);
    expect(after?.sealed_data).toContain(dataKeyId(Math.floor(clock.now().getTime() / (30 * 86_400_000))));
  });
});
