/** Tallies of a fuzz run and its readable summary: counts per route and status, failures grouped by class. */
import type { FuzzCase, Hostile } from "./cases.ts";
import type { Violation } from "./check.ts";
import type { PreparedRequest } from "./request.ts";

export interface Failure {
  route: string;
  violation: Violation;
  status: number;
  reproducer: string;
  /** The case, to replay (FUZZ_SEED plus this is enough to find it again). */
  plan: FuzzCase;
}

interface FailureClass {
  route: string;
  kind: string;
  statuses: Set<number>;
  count: number;
  first: Failure;
}

export class Tally {
  requests = 0;
  readonly byRoute = new Map<string, number>();
  readonly byStatus = new Map<number, number>();
  readonly byRouteStatus = new Map<string, Map<number, number>>();
  readonly classes = new Map<string, FailureClass>();
  failures = 0;

  count(route: string, status: number): void {
    this.requests += 1;
    this.byRoute.set(route, (this.byRoute.get(route) ?? 0) + 1);
    this.byStatus.set(status, (this.byStatus.get(status) ?? 0) + 1);
    const statuses = this.byRouteStatus.get(route) ?? new Map<number, number>();
    statuses.set(status, (statuses.get(status) ?? 0) + 1);
    this.byRouteStatus.set(route, statuses);
  }

  fail(failure: Failure): void {
    this.failures += 1;
    // One class per route, kind and detail (numbers and ids stripped), so a summary lists distinct failures.
    const detail = failure.violation.detail.replace(/[0-9a-f]{8,}|\d+/gi, "#").slice(0, 160);
    const id = `${failure.route}|${failure.violation.kind}|${detail}`;
    const known = this.classes.get(id);
    if (known) {
      known.count += 1;
      known.statuses.add(failure.status);
      // Keep the shortest reproducer: the closest to minimal.
      if (failure.reproducer.length < known.first.reproducer.length) known.first = failure;
    } else
      this.classes.set(id, {
        route: failure.route,
        kind: failure.violation.kind,
        statuses: new Set([failure.status]),
        count: 1,
        first: failure,
      });
  }
}

const MAX_SHOWN = 300;

/** method, path and body, each cut to something a person can read. */
export function reproducer(request: PreparedRequest, keyRole: string): string {
  const path =
    request.path.length > 160 ? `${request.path.slice(0, 160)}…(${request.path.length} chars)` : request.path;
  const size = request.body?.length ?? 0;
  const text = request.body ? request.body.subarray(0, MAX_SHOWN).toString("utf8") : "";
  const body = size === 0 ? "(no body)" : size > MAX_SHOWN ? `${text}…(${size} bytes)` : text;
  const type = request.headers["content-type"];
  const extras = [
    `key=${keyRole}`,
    type !== undefined ? `content-type=${JSON.stringify(type)}` : "no content-type",
    request.headers["svc-idempotency-key"] !== undefined ? "idempotency-key" : "",
    request.headers["svc-proxy-key"] !== undefined ? "proxy-key" : "",
  ].filter(Boolean);
  return `${request.method} ${path} [${extras.join(", ")}]\n      ${JSON.stringify(body).slice(1, -1)}`;
}

const short = (value: unknown) => {
  const text = JSON.stringify(value) ?? "undefined";
  return text.length > 80 ? `${text.slice(0, 80)}…` : text;
};

function describeHostile(value: Hostile): string {
  if (value.t === "json") return short(value.v);
  return value.t === "pad"
    ? `<string to ${value.size} the limit, of ${value.unit}>`
    : `<${value.shape} nested ${value.depth} deep>`;
}

/** The plan behind a request: for mutated examples, what was changed where (shorter than the body). */
export function describePlan(plan: FuzzCase): string {
  const body = plan.body;
  switch (body.kind) {
    case "none":
      return "no body";
    case "raw":
      return `raw ${short(body.text)}`;
    case "bytes":
      return `bytes ${body.hex}`;
    case "value":
      return `body ${describeHostile(body.value)}`;
    case "example":
      if (body.mutations.length === 0) return "the valid example";
      return `example, ${body.mutations
        .map((m) => {
          const at = m.path.length ? m.path.join(".") : "(root)";
          if (m.op === "delete") return `delete ${at}`;
          if (m.op === "set") return `set ${at} = ${describeHostile(m.value)}`;
          return `add ${at}[${JSON.stringify(m.key)}] = ${describeHostile(m.value)}`;
        })
        .join("; ")}`;
  }
}

export function summary(
  tally: Tally,
  routes: { operationId: string; method: string; path: string }[],
): string {
  const lines: string[] = [];
  lines.push("", `Requests: ${tally.requests} fuzzed, over ${routes.length} write routes`);
  lines.push("", "Per route (status: count):");
  const width = Math.max(...routes.map((r) => `${r.method} ${r.path}`.length));
  for (const r of routes) {
    const statuses = [...(tally.byRouteStatus.get(r.operationId)?.entries() ?? [])]
      .sort(([a], [b]) => a - b)
      .map(([s, n]) => `${s}:${n}`)
      .join(" ");
    const total = tally.byRoute.get(r.operationId) ?? 0;
    lines.push(`  ${`${r.method} ${r.path}`.padEnd(width)}  ${String(total).padStart(5)}  ${statuses}`);
  }
  lines.push("", "Per status:");
  for (const [status, n] of [...tally.byStatus.entries()].sort(([a], [b]) => a - b))
    lines.push(`  ${status === 0 ? "no answer" : status}: ${n}`);
  const classes = [...tally.classes.values()].sort(
    (a, b) => a.route.localeCompare(b.route) || b.count - a.count,
  );
  lines.push("", `Failures: ${tally.failures} in ${classes.length} classes`);
  for (const c of classes) {
    lines.push(
      `  [${c.kind}] ${c.route}: ${c.count}× (status ${[...c.statuses].join(", ")}) ${c.first.violation.detail}`,
    );
    lines.push(`    e.g. ${c.first.reproducer}`);
    lines.push(`      plan: ${describePlan(c.first.plan)}`);
  }
  return lines.join("\n");
}
