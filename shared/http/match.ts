import { routeKeyOf } from "./route.ts";

export interface RouteMatch<R> {
  route: R;
  routeKey: string;
  pathParameters: Record<string, string>;
}

interface Candidate<R> {
  route: R;
  segments: string[];
  literalCount: number;
  /** Its place in the route table: among equally literal candidates, the earlier wins. */
  order: number;
  /** A greedy `{name+}` last segment takes one or more remaining segments, as in API Gateway. */
  greedy: boolean;
}

/**
 * Matches request paths against route templates the way API Gateway does: a literal segment wins
 * over a `{param}` (so /applications/key beats /applications/{id}).
 */
export class RouteMatcher<R extends { method: string; path: string }> {
  /** Fixed-length candidates by their number of segments, most literal first. */
  private readonly bySegmentCount: Candidate<R>[][] = [];
  private readonly greedy: Candidate<R>[];
  private readonly forCount = new Map<number, Candidate<R>[]>();

  constructor(routes: readonly R[]) {
    const candidates = routes
      .map((route, order) => {
        const segments = route.path.split("/").filter(Boolean);
        return {
          route,
          order,
          segments,
          literalCount: segments.filter((s) => !s.startsWith("{")).length,
          greedy: (segments.at(-1) ?? "").endsWith("+}"),
        };
      })
      .sort(byPrecedence);
    this.greedy = candidates.filter((c) => c.greedy);
    for (const candidate of candidates) {
      if (candidate.greedy) continue;
      const count = candidate.segments.length;
      this.bySegmentCount[count] = [...(this.bySegmentCount[count] ?? []), candidate];
    }
  }

  /** Candidates for a path of `count` segments: fixed-length ones of that length and greedy ones, most literal first. */
  private candidatesFor(count: number): Candidate<R>[] {
    const known = this.forCount.get(count);
    if (known) return known;
    const found = [...(this.bySegmentCount[count] ?? []), ...this.greedy].sort(byPrecedence);
    // Remembered for the lengths routes have; a caller's 3,000-segment path is not kept.
    if (count < this.bySegmentCount.length + 2) this.forCount.set(count, found);
    return found;
  }

  private matchPath(candidate: Candidate<R>, parts: string[]): Record<string, string> | undefined {
    const greedy = candidate.greedy;
    if (greedy ? parts.length < candidate.segments.length : candidate.segments.length !== parts.length)
      return undefined;
    const params: Record<string, string> = {};
    for (let i = 0; i < candidate.segments.length; i++) {
      const template = candidate.segments[i] as string;
      const part = parts[i] as string;
      if (greedy && i === candidate.segments.length - 1) {
        params[template.slice(1, -2)] = parts.slice(i).join("/");
      } else if (template.startsWith("{")) {
        params[template.slice(1, -1)] = part;
      } else if (template !== part) {
        return undefined;
      }
    }
    return params;
  }

  /** The route for method and path, or the methods the path allows when only the method is wrong. */
  match(method: string, rawPath: string): RouteMatch<R> | { allowed: string[] } | undefined {
    const parts = rawPath.split("/").filter(Boolean).map(safeDecode);
    const allowed = new Set<string>();
    for (const candidate of this.candidatesFor(parts.length)) {
      const params = this.matchPath(candidate, parts);
      if (!params) continue;
      if (candidate.route.method === method)
        return { route: candidate.route, routeKey: routeKeyOf(candidate.route), pathParameters: params };
      allowed.add(candidate.route.method);
    }
    return allowed.size > 0 ? { allowed: [...allowed] } : undefined;
  }
}

const byPrecedence = <R>(a: Candidate<R>, b: Candidate<R>) =>
  b.literalCount - a.literalCount || a.order - b.order;

function safeDecode(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}
