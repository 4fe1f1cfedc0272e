/**
 * Review s51-a: fc24c1f made a resumed import keep a replayed batch's token ids when one of its tokens was
 * deleted or changed since (stubs instead of 404/409). A replay can still fail whole, and fail closed, on what
 * the tenant's data keys say: the tenant's own KMS key disabled (423), or not opening at the moment. The CLI takes
 * any whole-batch answer that names no line (stopOn stops only on 401/403/404/429/5xx) as "every line of the batch
 * failed" and records the batch finished: the batch's tokens, stored by the earlier run, reach no mapping, the
 * rerun once the key is enabled again skips the batch, and importing the "failed" lines again (as the summary
 * invites) creates them twice.
 */
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import {
  createLocalCustomerKey,
  setLocalCustomerKeyEnabled,
} from "#shared/adapters/local/local-customer-keys.ts";
import { DEFAULT_KEYRING_OPTIONS } from "#shared/domain/crypto/keyring.ts";
import { mappedTokenIds } from "#test/support/cli.ts";
import { advanceTestClock, useService } from "#test/support/service.ts";
import {
  appKey,
  cardNumberOf,
  listAllTokens,
  revealEverything,
  tenantWithOwner,
} from "#test/support/tokens.ts";
import { runImport } from "../../../scripts/cli/import.ts";

const svc = useService();
const quiet = { write: () => true, isTTY: false };
const kmsDir = () => svc.service.deps.config.localKmsDir ?? "";
const card = (i: number) => ({
  type: "card",
  data: { number: cardNumberOf(i), expiration_month: 1 + (i % 12), expiration_year: 2030 },
});

describe("review s51-a: a resumed import whose replay is refused whole (423, the tenant's key disabled)", () => {
  it("does not record the replayed batch as failed: its stored tokens reach the mapping once the key is back", async () => {
    const { api, tenant, owner } = await tenantWithOwner(svc);
    const reader = await appKey(api, tenant.managementKey, { type: "private", rules: revealEverything });
    const name = `import-${tenant.tenantId}`;
    const keyArn = createLocalCustomerKey(kmsDir(), name);
    const put = await api.put("/tenants/self/keys/kms", {
      key: tenant.managementKey,
      body: { key_arn: keyArn },
    });
    expect(put.status, JSON.stringify(put.body)).toBe(200);

    const file = join(mkdtempSync(join(tmpdir(), "svc-review-s51a-")), "cards.jsonl");
    writeFileSync(file, `${Array.from({ length: 5 }, (_, i) => JSON.stringify(card(i))).join("\n")}\n`);
    const first = await runImport({ file, url: svc.url, key: owner, batchSize: 5, progress: quiet });
    expect(first.failed).toEqual([]);
    const ids = mappedTokenIds(first.mapping_file);
    expect(ids).toHaveLength(5);
    // Killed before the batch was recorded (as import-resume-replay.test.ts cuts it).
    const state = readFileSync(first.state_file, "utf8").split("\n");
    writeFileSync(first.state_file, state.filter((line) => !line.includes('"records"')).join("\n"));

    // Meanwhile the tenant's key refuses for a while (disabled by mistake, a grant being fixed).
    setLocalCustomerKeyEnabled(kmsDir(), name, false);
    await advanceTestClock(svc, DEFAULT_KEYRING_OPTIONS.cacheSeconds + 1);
    const resumed = await runImport({ file, url: svc.url, key: owner, batchSize: 5, progress: quiet }).then(
      (summary) => summary,
      (error: Error) => error,
    );
    // What the CLI did with the 423 (stopping the run is what keeps the batch resumable).
    const failedStatuses = resumed instanceof Error ? [] : resumed.failed.map((f) => f.status);

    // The key is enabled again; the import is run again to finish.
    setLocalCustomerKeyEnabled(kmsDir(), name, true);
    const finished = await runImport({ file, url: svc.url, key: owner, batchSize: 5, progress: quiet });

    // Before: the 423 run reported the five lines failed ([423 x5]) and recorded the batch finished; the rerun
    // skipped it: nothing failed is left to resume, the five stored tokens are in no mapping.
    expect(failedStatuses).not.toContain(423);
    expect(finished.failed).toEqual([]);
    expect(mappedTokenIds(finished.mapping_file).sort()).toEqual([...ids].sort());
    expect((await listAllTokens(api, reader)).length).toBe(5);
  });
});
