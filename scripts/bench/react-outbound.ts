/**
 * The react-outbound scenario (docs/performance.md, "React with an outbound call"): what a formula's `fetch`
 * costs over a plain `fetch` from Node to the same local destination. One request at a time, in turn:
 * - direct: this process POSTs to the destination;
 * - react: a trivial formula (the same react path, no call);
 * - react-outbound: a formula that POSTs once to the destination (through the host's fetch bridge).
 * What the bridge adds at p50 = p50(react-outbound) − p50(react) − p50(direct). The same three, without the
 * service, through a ProcessSandbox in this process: the bridge alone, with less of the machine's noise.
 */
import { logger } from "#shared/logger.ts";
import { ProcessSandbox } from "#shared/sandbox/pool.ts";
import { timedCall } from "./api.ts";
import { DESTINATION_PATH, describeStats, interleavedLatencies, type LatencyStats } from "./proxy.ts";
import { REACT_BODY, setUpReactor } from "./react.ts";

/** The issue's target: one outbound call adds at most 5 ms at p50 over a plain fetch, warm. */
export const REACT_OUTBOUND_TARGET_MS = 5;

const CHARGE = JSON.stringify({ amount: 1200, currency: "eur" });

const outboundFormula = (destinationUrl: string) => `module.exports = async (req) => {
  const res = await fetch(${JSON.stringify(`${destinationUrl}${DESTINATION_PATH}`)}, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: ${JSON.stringify(CHARGE)},
  });
  const charge = await res.json();
  return { raw: { ok: res.ok, status: charge.status } };
};`;

export interface ReactOutboundLatency {
  direct: LatencyStats;
  react: LatencyStats;
  react_outbound: LatencyStats;
  /** p50(react-outbound) − p50(react) − p50(direct). */
  outbound_adds_p50_ms: number;
  /** The same through a ProcessSandbox in the bench process: p50(run with fetch) − p50(plain run) − p50(direct). */
  sandbox: {
    direct: LatencyStats;
    run: LatencyStats;
    run_with_fetch: LatencyStats;
    bridge_adds_p50_ms: number;
  };
}

export async function measureReactOutbound(options: {
  serviceUrl: string;
  managementKey: string;
  applicationId: string;
  useKey: string;
  /** The proxy scenario's destination (scripts/bench/destination.ts). */
  destinationUrl: string;
  samples: number;
  log: (line: string) => void;
  /** Throws to stop (Ctrl-C); called between requests. */
  check: () => void;
}): Promise<ReactOutboundLatency> {
  const { serviceUrl, useKey, destinationUrl, samples, log, check } = options;
  log("react-outbound: creating a trivial formula and one that POSTs to the destination…");
  const plainPath = await setUpReactor(options, { name: "bench react" });
  const outboundPath = await setUpReactor(options, {
    name: "bench react-outbound",
    code: outboundFormula(destinationUrl),
  });
  log(`react-outbound: ${samples} requests per target, one at a time, in turn…`);
  const [direct, react, react_outbound] = await interleavedLatencies(
    [
      () => timedCall(destinationUrl, "POST", DESTINATION_PATH, undefined, CHARGE, 200),
      () => timedCall(serviceUrl, "POST", plainPath, useKey, REACT_BODY, 200),
      () => timedCall(serviceUrl, "POST", outboundPath, useKey, REACT_BODY, 200),
    ],
    samples,
    check,
  );
  check();
  log(`react-outbound: ${samples} warm runs per target through a ProcessSandbox in this process…`);
  return {
    direct,
    react,
    react_outbound,
    outbound_adds_p50_ms: Number((react_outbound.p50 - react.p50 - direct.p50).toFixed(2)),
    sandbox: await bridgeAlone(destinationUrl, samples, check),
  };
}

async function bridgeAlone(destinationUrl: string, samples: number, check: () => void) {
  // The host side logs each call; here that would be the bench's own output.
  logger.setLogLevel("WARN");
  const sandbox = new ProcessSandbox({ outbound: { allowPrivate: true } });
  const input = { url: `${destinationUrl}${DESTINATION_PATH}` };
  const withFetch = `module.exports = async (req) => {
    const res = await fetch(req.url, { method: "POST", headers: { "content-type": "application/json" }, body: ${JSON.stringify(CHARGE)} });
    return (await res.json()).status;
  };`;
  const plain = `module.exports = async () => "succeeded";`;
  const timed = async (work: () => Promise<unknown>) => {
    const started = performance.now();
    await work();
    return performance.now() - started;
  };
  try {
    const [direct, run, run_with_fetch] = await interleavedLatencies(
      [
        () => timedCall(destinationUrl, "POST", DESTINATION_PATH, undefined, CHARGE, 200),
        () => timed(() => sandbox.run({ tenantId: "bench", code: plain, input, timeoutMs: 5000 })),
        () => timed(() => sandbox.run({ tenantId: "bench", code: withFetch, input, timeoutMs: 5000 })),
      ],
      samples,
      check,
    );
    return {
      direct,
      run,
      run_with_fetch,
      bridge_adds_p50_ms: Number((run_with_fetch.p50 - run.p50 - direct.p50).toFixed(2)),
    };
  } finally {
    await sandbox.close();
  }
}

export function describeReactOutbound(latency: ReactOutboundLatency): string {
  return [
    "React with one outbound call (unloaded, one request at a time):",
    `  direct fetch from Node   ${describeStats(latency.direct)}`,
    `  react, trivial formula   ${describeStats(latency.react)}`,
    `  react, one fetch         ${describeStats(latency.react_outbound)}`,
    "The bridge alone (a ProcessSandbox in the bench process, same destination):",
    `  direct fetch from Node   ${describeStats(latency.sandbox.direct)}`,
    `  warm run, no fetch       ${describeStats(latency.sandbox.run)}`,
    `  warm run, one fetch      ${describeStats(latency.sandbox.run_with_fetch)}`,
    `  the bridge alone adds at p50: ${latency.sandbox.bridge_adds_p50_ms.toFixed(2)} ms`,
    `One fetch adds over a plain fetch at p50, through the service: ${latency.outbound_adds_p50_ms.toFixed(2)} ms (target ≤ ${REACT_OUTBOUND_TARGET_MS} ms)`,
  ].join("\n");
}
