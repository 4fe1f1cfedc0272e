import type { TenantPrincipal } from "./entities.ts";
import { forbidden } from "./errors.ts";
import { ceilingOf } from "./grant-ceiling.ts";
import type { StoredProxy } from "./proxies/proxy.ts";
import type { StoredFormula, StoredReactor } from "./reactors/model.ts";
import { canonicalJson } from "./tokens/expression-filters.ts";

/**
 * The stored fields, per resource, that decide what code runs on callers' detokenized data or where that data
 * goes. Whoever sets one acts for every later caller, bound to an application or not:
 * - proxy: where requests go (`destination_url`, `allowed_hosts` for transforms' `fetch`), the code that sees
 *   them (both transforms) and what it reads (`configuration`), whether callers authenticate (`require_auth`),
 *   and whose rights detokenize and back `svc` (`application_id`);
 * - reactor: the code (`formula_id`, or its own inline `code`), what it reads
 *   (`configuration`) and whose rights back `svc` and `tokenize` (`application_id`);
 * - reactor_formula: the code, `request_parameters` (with none declared every arg reaches the code, else only
 *   the declared ones) and `allowed_hosts`. Its `configuration` only declares what reactors must supply: runs
 *   read the reactor's stored values, so the declarations change nothing that runs.
 * A react's `callback_url` is chosen by each caller for its own result, and the webhook secret only signs, so
 * no stored callback field routes data.
 */
export const DATA_ROUTING_FIELDS = {
  proxy: [
    "destination_url",
    "request_transform",
    "response_transform",
    "configuration",
    "allowed_hosts",
    "require_auth",
    "application_id",
  ],
  reactor: ["formula_id", "code", "configuration", "application_id"],
  reactor_formula: ["code", "request_parameters", "allowed_hosts"],
} as const satisfies {
  // Names of stored fields, so a renamed field fails the type check instead of silently leaving the list.
  proxy: readonly (keyof StoredProxy)[];
  reactor: readonly (keyof StoredReactor)[];
  reactor_formula: readonly (keyof StoredFormula)[];
};

export type RoutingResource = keyof typeof DATA_ROUTING_FIELDS;
/** A stored record of `R`, as far as routing goes (every other field is ignored). */
type Routed<R extends RoutingResource> = { [F in (typeof DATA_ROUTING_FIELDS)[R][number]]?: unknown };

const LABEL: Record<RoutingResource, string> = {
  proxy: "a proxy",
  reactor: "a reactor",
  reactor_formula: "a reactor formula",
};

/** Equal as data: key order and absent-versus-null do not count; what cannot be compared counts as changed. */
function same(a: unknown, b: unknown): boolean {
  try {
    return canonicalJson(a) === canonicalJson(b);
  } catch {
    return false;
  }
}

/** The routing fields `next` sets differently from `current` (every field set, on create), as body paths. */
export function routingChanges<R extends RoutingResource>(
  resource: R,
  next: Routed<R>,
  current?: Routed<R>,
): string[] {
  const fields: readonly (keyof Routed<R>)[] = DATA_ROUTING_FIELDS[resource];
  const changed = current ? fields.filter((f) => !same(next[f], current[f])) : fields;
  return changed.map((f) => String(f).replace(/_id$/, ".id"));
}

/**
 * 403 unless the caller may decide what code sees and where data goes: creating the resource, or changing any
 * of its routing fields by PUT or PATCH. Any key of the tenant may call a proxy or reactor, so the callers'
 * reveal is everything the tenant holds, and only a ceiling that covers it may act for them: a member's own
 * key, which has none (grant-ceiling.ts). Management keys hold no token access, so no other key qualifies.
 */
export function assertMayRouteData<R extends RoutingResource>(
  principal: TenantPrincipal,
  resource: R,
  next: Routed<R>,
  current?: Routed<R>,
): void {
  if (ceilingOf(principal) === undefined) return;
  const changed = routingChanges(resource, next, current);
  if (changed.length === 0) return;
  throw forbidden(
    current
      ? `Only a member's own management key may change ${changed.join(", ")} of ${LABEL[resource]}: ` +
          "they decide what code sees callers' data and where it goes."
      : `Only a member's own management key may create ${LABEL[resource]}: ` +
          "it decides what code sees callers' data and where it goes.",
  );
}
