import type middy from "@middy/core";
import type { SvcMiddleware, SvcRequest } from "../request-state.ts";

type Step = (request: SvcRequest) => unknown;

/**
 * Runs `steps` from `from` on, in order, as middy runs a phase's middlewares: the first that returns a value
 * (anything but undefined) ends the phase with it; a throw or a rejection ends it with that error. A step that
 * answers a promise is waited for; the others run one after the other in the same turn.
 */
function runSteps(request: SvcRequest, steps: readonly Step[], from: number): unknown {
  for (let i = from; i < steps.length; i++) {
    const result = (steps[i] as Step)(request);
    if (result instanceof Promise)
      return result.then((value: unknown) => (value !== undefined ? value : runSteps(request, steps, i + 1)));
    if (result !== undefined) return result;
  }
  return undefined;
}

/**
 * The service's middlewares as ONE middy middleware, with middy's own order and rules: `before`s in the order
 * given (a returned value is the early answer, and no handler or `after` runs), `after`s and `onError`s in the
 * reverse order (a returned value ends the phase). Middy awaits each middleware of a phase, sync or not: about
 * 20 promises and turns of the microtask queue a request, 3.6 KiB of allocation in its own loop alone (the request
 * path's allocation profile, docs/performance.md). Here only the steps that are asynchronous are waited for.
 */
export function composeMiddlewares(
  middlewares: readonly (SvcMiddleware | middy.MiddlewareObj)[],
): SvcMiddleware {
  const all = middlewares as readonly SvcMiddleware[];
  const befores = all.flatMap((m) => (m.before ? [m.before as Step] : []));
  const afters = all.flatMap((m) => (m.after ? [m.after as Step] : [])).reverse();
  const onErrors = all.flatMap((m) => (m.onError ? [m.onError as Step] : [])).reverse();
  return {
    ...(befores.length > 0 ? { before: (request: SvcRequest) => runSteps(request, befores, 0) } : {}),
    ...(afters.length > 0 ? { after: (request: SvcRequest) => runSteps(request, afters, 0) } : {}),
    ...(onErrors.length > 0 ? { onError: (request: SvcRequest) => runSteps(request, onErrors, 0) } : {}),
  } as SvcMiddleware;
}
