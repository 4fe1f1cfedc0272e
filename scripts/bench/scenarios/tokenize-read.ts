/**
 * tokenize and read: the service against its floor (scripts/bench/floor-service.ts), each seeded with the same
 * card tokens; the service's req/s must reach a share of the floor's.
 */

import { runLoad } from "../load.ts";
import type { LoadTarget, RunRecord } from "../runs.ts";
import { cardBody, settings } from "../settings.ts";
import { compared, runsOf, type Summary, summaryOf } from "../summary.ts";
import { LEAD_HEADER, leadCells, ms2, pct, renderTable, targetCell, verdict } from "../tables.ts";
import type { RunningTarget } from "../targets.ts";

export type FloorScenario = "tokenize" | "read";

/** Share of the floor's req/s the service must reach. */
export const FLOOR_TARGET_RATIO: Record<FloorScenario, number> = { tokenize: 0.6, read: 0.6 };

/** A floor or service target of the tokenize and read scenarios. */
export interface FloorOrService {
  name: "floor" | "service";
  running: RunningTarget;
  createKey?: string;
  readKey?: string;
  ids: string[];
}

function loadFor(scenario: "tokenize" | "read", target: FloorOrService, durationSeconds: number) {
  const key = scenario === "tokenize" ? target.createKey : target.readKey;
  const headers: Record<string, string> = key ? { "svc-api-key": key } : {};
  if (scenario === "tokenize")
    return runLoad({
      url: target.running.url,
      connections: settings.connections,
      durationSeconds,
      headers: { ...headers, "content-type": "application/json" },
      method: "POST",
      path: () => "/tokens",
      body: cardBody,
    });
  let next = 0;
  return runLoad({
    url: target.running.url,
    connections: settings.connections,
    durationSeconds,
    headers,
    method: "GET",
    path: () => `/tokens/${encodeURIComponent(target.ids[next++ % target.ids.length] as string)}`,
  });
}

export const floorServiceTarget = (scenario: "tokenize" | "read", target: FloorOrService): LoadTarget => ({
  label: target.name,
  pid: target.running.pid,
  traced: target.running,
  load: (durationSeconds) => loadFor(scenario, target, durationSeconds),
});

export function summarizeFloorScenario(scenario: FloorScenario, records: RunRecord[]): Summary[] {
  const floor = runsOf(records, scenario, "floor");
  const service = runsOf(records, scenario, "service");
  if (floor.length === 0 || service.length === 0) return [];
  const floorSummary = summaryOf(scenario, "floor", floor);
  return [
    floorSummary,
    compared(summaryOf(scenario, "service", service), floorSummary, FLOOR_TARGET_RATIO[scenario]),
  ];
}

/** Tokenize and read: floor against service. */
function floorTable(summaries: Summary[]): string {
  const header = [...LEAD_HEADER, "CPU ms/req target + DDB Local", "service/floor", "target", "result"];
  const rows = summaries.map((s) => [
    ...leadCells(s),
    `${ms2(s.target_cpu_ms_per_request)} + ${ms2(s.dynamodb_local_cpu_ms_per_request)}`,
    pct(s.ratio),
    targetCell(s),
    verdict(s.pass),
  ]);
  return renderTable(header, rows, new Set([2, 3, 4, 5, 6]));
}

/** The table, and the CPU-bound ratio beside each measured one. */
export function printFloorScenarios(summaries: Summary[]): void {
  console.log(`${floorTable(summaries)}\n`);
  for (const s of summaries.filter((x) => x.cpu_ratio !== undefined))
    console.log(
      `${s.scenario}: CPU per request (service, DynamoDB Local and autocannon together) is ` +
        `${((1 / (s.cpu_ratio as number)) * 100).toFixed(0)} % of the floor's, ` +
        `i.e. a CPU-bound ratio of ${((s.cpu_ratio as number) * 100).toFixed(0)} % (cross-check of the measured ${((s.ratio as number) * 100).toFixed(0)} %).`,
    );
}
