import { describe, expect, it } from "vitest";
import { callbackDeps } from "#shared/composition/callbacks.ts";
import type { CallbackJob } from "#shared/domain/reactors/callback-job.ts";
import { useLocalServer } from "#test/support/local-server.ts";
import { createReactor } from "#test/support/reactors.ts";
import { advanceTestClock, useService } from "#test/support/service.ts";
import { appKey } from "#test/support/tokens.ts";

/**
 * A queued run's claim must hold for as long as the run may: an asynchronous reaction may run for up to
 * timeout_ms (210 s at most), and a second delivery of the same job (SQS delivers at least once) arriving while the
 * first still runs must not run the code again. The claim's lease was the HTTP one (60 s): past it the duplicate
 * took the claim over and ran the code (and its outbound calls) a second time.
 */
const svc = useService({ allowPrivateDestinations: true });

let charges = 0;
let charged: () => void = () => {};
let holdRelease: () => void = () => {};
let held = false;
const partner = useLocalServer((req, res) => {
  res.setHeader("content-type", "application/json");
  if ((req.url ?? "").startsWith("/charge")) {
    charges += 1;
    charged();
    res.end("{}");
    return;
  }
  // The first run's second call waits for the test: it is still running, whatever the machine's speed.
  if ((req.url ?? "").startsWith("/hold") && !held) {
    held = true;
    holdRelease = () => res.end("{}");
    return;
  }
  res.end("{}");
});

describe("a queued reaction delivered again while its first run is still running", () => {
  it("does not run the code a second time once the run has lasted more than 60 s", async () => {
    const code = `module.exports = async function () {
      await fetch("${partner.url}/charge");
      await fetch("${partner.url}/hold");
      return { raw: { charged: true } };
    };`;
    const { api, tenant, reactorId } = await createReactor(svc, {
      formula: { name: "charge", code },
      permissions: ["token:create", "token:use"],
    });
    const user = await appKey(api, tenant.managementKey, { type: "private", permissions: ["token:use"] });

    // The job as SQS would carry it, to deliver it a second time.
    const queue = svc.service.deps.localJobQueue;
    const enqueue = queue.enqueue.bind(queue);
    let job: CallbackJob | undefined;
    const chargeSeen = new Promise<void>((resolve) => {
      charged = resolve;
    });
    queue.enqueue = async (queued: CallbackJob) => {
      job = JSON.parse(JSON.stringify(queued)) as CallbackJob;
      return enqueue(queued);
    };
    try {
      const accepted = await api.post<{ asyncReactorRequestId: string }>(
        `/reactors/${reactorId}/react-async`,
        { key: user, body: { args: {}, timeout_ms: 120_000 } },
      );
      expect(accepted.status, JSON.stringify(accepted.body)).toBe(202);
    } finally {
      queue.enqueue = enqueue;
    }
    // The first delivery's run has called out and is still running: 61 s pass (the run may last 120 s).
    await chargeSeen;
    await advanceTestClock(svc, 61);

    const runner = callbackDeps(svc.service.deps).runner;
    const second = await runner.run(job as CallbackJob).then(
      () => "ran",
      () => "refused",
    );
    holdRelease();
    await queue.idle();

    expect(charges).toBe(1);
    expect(second).toBe("refused");
  }, 60_000);
});
