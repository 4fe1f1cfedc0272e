import { routeKeyOf } from "./route.ts";

export interface RouteMatch<R> {
  route: R;
  routeKey: string;
  pathParameters: Record<string, string>;
}

interface Candidate<R> {
  route: R;
  /** API Gateway's routeKey of the route ("GET /tokens/{id}"), made once. */
  routeKey: string;
  segments: string[];
  /** Each segment's parameter name (`{id}` → "id", `{path+}` → "path"), undefined for a literal one. */
  names: (string | undefined)[];
  literalCount: number;
  /** A greedy `{name+}` last segment takes one or more remaining segments, as in API Gateway. */
  greedy: boolean;
}

/**
 * Matches request paths against route templates the way API Gateway does: a literal segment wins
 * over a `{param}` (so /applications/key beats /applications/{id}).
 */
export class RouteMatcher<R extends { method: string; path: string }> {
  /** Most literal first (a stable sort: among equally literal ones, the route table's order). */
  private readonly candidates: Candidate<R>[];
  /** The candidates a path of N segments can match, by N: found once per N. */
  private readonly forCount = new Map<number, Candidate<R>[]>();
  /** Paths longer than every route have the same candidates (greedy ones only), remembered under this N. */
  private readonly longest: number;

  constructor(routes: readonly R[]) {
    this.candidates = routes
      .map((route) => {
        const segments = route.path.split("/").filter(Boolean);
        return {
          route,
          routeKey: routeKeyOf(route),
          segments,
          names: segments.map((s) =>
            !s.startsWith("{") ? undefined : s.endsWith("+}") ? s.slice(1, -2) : s.slice(1, -1),
          ),
          literalCount: segments.filter((s) => !s.startsWith("{")).length,
          greedy: (segments.at(-1) ?? "").endsWith("+}"),
        };
      })
      .sort((a, b) => b.literalCount - a.literalCount);
    this.longest = Math.max(0, ...this.candidates.map((c) => c.segments.length)) + 1;
  }

  private candidatesFor(count: number): Candidate<R>[] {
    const n = Math.min(count, this.longest);
    let found = this.forCount.get(n);
    if (!found) {
      found = this.candidates.filter((c) => (c.greedy ? c.segments.length <= n : c.segments.length === n));
      this.forCount.set(n, found);
    }
    return found;
  }

  private matchPath(candidate: Candidate<R>, parts: string[]): Record<string, string> | undefined {
    const greedy = candidate.greedy;
    if (greedy ? parts.length < candidate.segments.length : candidate.segments.length !== parts.length)
      return undefined;
    const { segments, names } = candidate;
    // The literal segments first: most candidates fail there, before anything is made.
    for (let i = 0; i < segments.length; i++)
      if (names[i] === undefined && segments[i] !== parts[i]) return undefined;
    const params: Record<string, string> = {};
    for (let i = 0; i < segments.length; i++) {
      const name = names[i];
      if (name === undefined) continue;
      params[name] = greedy && i === segments.length - 1 ? parts.slice(i).join("/") : (parts[i] as string);
    }
    return params;
  }

  /** The route for method and path, or the methods the path allows when only the method is wrong. */
  match(method: string, rawPath: string): RouteMatch<R> | { allowed: string[] } | undefined {
    const parts = rawPath.split("/").filter(Boolean);
    // Most paths have no escape to decode (ids are UUIDs and plain names).
    if (rawPath.includes("%"))
      for (let i = 0; i < parts.length; i++) parts[i] = safeDecode(parts[i] as string);
    let allowed: Set<string> | undefined;
    for (const candidate of this.candidatesFor(parts.length)) {
      const params = this.matchPath(candidate, parts);
      if (!params) continue;
      if (candidate.route.method === method)
        return { route: candidate.route, routeKey: candidate.routeKey, pathParameters: params };
      allowed ??= new Set<string>();
      allowed.add(candidate.route.method);
    }
    return allowed ? { allowed: [...allowed] } : undefined;
  }
}

function safeDecode(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}
