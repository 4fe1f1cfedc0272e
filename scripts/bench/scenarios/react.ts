/** react: a trivial formula through a reactor, warm (no target to compare with). */
import { REACT_BODY } from "../react.ts";
import { type LoadTarget, postLoad, type RunRecord } from "../runs.ts";
import { runsOf, type Summary, summaryOf } from "../summary.ts";
import { LEAD_HEADER, leadCells, ms2, renderTable, serviceCpu } from "../tables.ts";
import type { RunningTarget } from "../targets.ts";

export const reactTarget = (service: RunningTarget, path: string, useKey: string): LoadTarget => ({
  label: "service",
  pid: service.pid,
  traced: service,
  load: postLoad(
    service.url,
    path,
    { "svc-api-key": useKey, "content-type": "application/json" },
    REACT_BODY,
  ),
});

export function summarizeReact(records: RunRecord[]): Summary[] {
  const service = runsOf(records, "react", "service");
  return service.length > 0 ? [summaryOf("react", "service", service)] : [];
}

/** React: the service alone. */
export function reactTable(summaries: Summary[]): string {
  const header = [...LEAD_HEADER, "CPU ms/req service (of which sandbox) + DDB Local"];
  const rows = summaries.map((s) => [
    ...leadCells(s),
    `${serviceCpu(s)} + ${ms2(s.dynamodb_local_cpu_ms_per_request)}`,
  ]);
  return renderTable(header, rows, new Set([2, 3, 4, 5]));
}
