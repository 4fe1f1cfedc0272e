/** What a fuzz run tells: counts per route and status, failures by class with their shortest reproducer. */
import type { FuzzCase } from "./cases.ts";
import type { Violation } from "./check.ts";
import type { PreparedRequest } from "./request.ts";

/** A failed case: its route, reproducer and plan (none for a canary or an unattributed pollution). */
export type Failure = Violation & { route: string; status: number; shown: string; plan?: FuzzCase };

export class Tally {
  requests = 0;
  failures = 0;
  readonly byRoute = new Map<string, Map<number, number>>();
  /** One class per route, kind and detail (numbers and ids stripped). */
  readonly classes = new Map<string, { count: number; statuses: Set<number>; first: Failure }>();

  count(route: string, status: number): void {
    this.requests += 1;
    const statuses = this.byRoute.get(route) ?? new Map<number, number>();
    this.byRoute.set(route, statuses.set(status, (statuses.get(status) ?? 0) + 1));
  }

  fail(failure: Failure): void {
    this.failures += 1;
    const id = `${failure.route}|${failure.kind}|${failure.detail.replace(/[0-9a-f]{8,}|\d+/gi, "#").slice(0, 160)}`;
    const known = this.classes.get(id) ?? { count: 0, statuses: new Set(), first: failure };
    known.count += 1;
    known.statuses.add(failure.status);
    if (failure.shown.length < known.first.shown.length) known.first = failure; // the closest to minimal
    this.classes.set(id, known);
  }
}

/** Method, path, headers (the key by its role) and body, each cut to something a person can read. */
export function reproducer({ method, path, body, headers, keyRole }: PreparedRequest): string {
  const shownHeaders = JSON.stringify({ ...headers, "svc-api-key": keyRole }).slice(0, 300);
  const shownBody = JSON.stringify(String(body?.subarray(0, 300) ?? "")).slice(1, -1);
  return `${method} ${path.slice(0, 160)} ${shownHeaders}\n      ${shownBody} (${body?.length ?? 0} bytes)`;
}

export function summary(
  tally: Tally,
  routes: { operationId: string; method: string; path: string }[],
): string {
  const lines = [
    `\nRequests: ${tally.requests} over ${routes.length} write routes\n\nPer route (status:count):`,
  ];
  const width = Math.max(...routes.map((r) => `${r.method} ${r.path}`.length));
  for (const r of routes) {
    const statuses = [...(tally.byRoute.get(r.operationId) ?? [])].sort(([a], [b]) => a - b);
    const total = statuses.reduce((sum, [, n]) => sum + n, 0);
    const shown = statuses.map(([s, n]) => `${s}:${n}`).join(" ");
    lines.push(`  ${`${r.method} ${r.path}`.padEnd(width)}  ${String(total).padStart(5)}  ${shown}`);
  }
  const classes = [...tally.classes.values()];
  classes.sort((a, b) => a.first.route.localeCompare(b.first.route) || b.count - a.count);
  lines.push(`\nFailures: ${tally.failures} in ${classes.length} classes`);
  for (const { first, count, statuses } of classes) {
    const seen = `${count}× (status ${[...statuses].join(", ")})`;
    lines.push(`  [${first.kind}] ${first.route}: ${seen} ${first.detail}`, `    e.g. ${first.shown}`);
    // The plan: for a mutated example, what was changed where (shorter than the body).
    if (first.plan) lines.push(`      plan: ${JSON.stringify(first.plan.body).slice(0, 300)}`);
  }
  return lines.join("\n");
}
