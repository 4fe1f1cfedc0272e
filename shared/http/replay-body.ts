import { type DataRead, type PresentedTokenRef, TokenNotStanding } from "#shared/domain/idempotency-scope.ts";

type Path = (string | number)[];

/**
 * An answer as an idempotency record keeps it: the body with every presented token taken out (left null) and,
 * apart, where each was and which token it was. Positions, not markers in the body: nothing a body holds (say a
 * reactor's output) can pass for a token reference.
 */
export interface ReplayBody {
  body: unknown;
  tokens: { path: Path; ref: PresentedTokenRef }[];
  /** Tokens whose data the answer was computed from: it is replayed only while each is unchanged and alive. */
  reads?: DataRead[];
}

/** Takes the presented tokens (`refOf` knows them by identity) out of a reply body. */
export function toReplayBody(
  body: unknown,
  refOf: (value: object) => PresentedTokenRef | undefined,
): ReplayBody {
  const tokens: ReplayBody["tokens"] = [];
  const walk = (value: unknown, path: Path): unknown => {
    if (typeof value !== "object" || value === null) return value;
    const ref = refOf(value);
    if (ref) {
      tokens.push({ path, ref });
      return null;
    }
    if (Array.isArray(value)) return value.map((item, i) => walk(item, [...path, i]));
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, walk(v, [...path, k])]));
  };
  return { body: walk(body, []), tokens };
}

/**
 * Puts each token back, presented again (in order, so audit entries follow the answer's order). `eachToken`: a
 * token deleted or changed since is answered by its stub in its place (RouteSpec.replayEachToken); otherwise it
 * fails the whole replay (404 or 409).
 */
export async function fromReplayBody(
  stored: ReplayBody,
  presentAgain: (ref: PresentedTokenRef) => Promise<unknown>,
  checkRead: (read: DataRead) => Promise<void>,
  eachToken = false,
): Promise<unknown> {
  for (const read of stored.reads ?? []) await checkRead(read);
  let body = stored.body;
  for (const { path, ref } of stored.tokens) {
    const view = await presentAgain(ref).catch((error: unknown) => {
      if (eachToken && path.length > 0 && error instanceof TokenNotStanding) return error.stub;
      throw error;
    });
    if (path.length === 0) {
      body = view;
      continue;
    }
    let parent = body as Record<string | number, unknown>;
    for (const step of path.slice(0, -1)) parent = parent[step] as Record<string | number, unknown>;
    parent[path[path.length - 1] as string | number] = view;
  }
  return body;
}
