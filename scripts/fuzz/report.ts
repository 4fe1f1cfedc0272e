/** What a fuzz run tells: counts per route and status, failures by class with their shortest reproducer. */
import type { FuzzCase } from "./cases.ts";
import type { Violation } from "./check.ts";
import type { PreparedRequest } from "./request.ts";

/** A failed case: its route, reproducer and plan (none for a canary failure). */
export type Failure = Violation & { route: string; status: number; shown: string; plan?: FuzzCase };

export class Tally {
  requests = 0;
  failures = 0;
  readonly byRoute = new Map<string, Record<number, number>>(); // status → count
  /** One class per route, kind and detail (numbers and ids stripped): its count and shortest reproducer. */
  readonly classes = new Map<string, { count: number; first: Failure }>();

  count(route: string, status: number): void {
    this.requests += 1;
    const counts = this.byRoute.get(route) ?? {};
    this.byRoute.set(route, { ...counts, [status]: (counts[status] ?? 0) + 1 });
  }

  fail(failure: Failure): void {
    this.failures += 1;
    const id = `${failure.route}|${failure.kind}|${failure.detail.replace(/[0-9a-f]{8,}|\d+/gi, "#").slice(0, 160)}`;
    const known = this.classes.get(id) ?? { count: 0, first: failure };
    if (failure.shown.length < known.first.shown.length) known.first = failure; // the closest to minimal
    this.classes.set(id, { ...known, count: known.count + 1 });
  }
}

/** Method, path, headers (the key by its role) and body, each cut to something a person can read. */
export function reproducer({ method, path, body, headers, keyRole }: PreparedRequest): string {
  const shownHeaders = JSON.stringify({ ...headers, "svc-api-key": keyRole }).slice(0, 300);
  const shownBody = JSON.stringify(String(body?.subarray(0, 300) ?? "")).slice(1, -1);
  return `${method} ${path.slice(0, 160)} ${shownHeaders}\n      ${shownBody} (${body?.length ?? 0} bytes)`;
}

export function summary(tally: Tally, routes: { operationId: string; method: string; path: string }[]) {
  const lines = [`\nRequests: ${tally.requests} over ${routes.length} routes; per route (status:count):`];
  for (const r of routes) {
    const counts = Object.entries(tally.byRoute.get(r.operationId) ?? {}); // statuses ascending
    lines.push(`  ${r.method} ${r.path}  ${counts.map(([status, n]) => `${status}:${n}`).join(" ")}`);
  }
  const classes = [...tally.classes.values()].sort((a, b) => a.first.route.localeCompare(b.first.route));
  lines.push(`\nFailures: ${tally.failures} in ${classes.length} classes`);
  for (const { first, count } of classes) {
    const head = `  [${first.kind}] ${first.route} ${first.status}, ${count}×: ${first.detail}`;
    lines.push(head, `    e.g. ${first.shown}`);
    // The plan: for a mutated example, what was changed where (shorter than the body).
    if (first.plan) lines.push(`      plan: ${JSON.stringify(first.plan.body).slice(0, 300)}`);
  }
  return lines.join("\n");
}
