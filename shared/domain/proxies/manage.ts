import { auditEvent, recordEvents } from "#shared/domain/audit-entry.ts";
import type { Sealer } from "#shared/domain/crypto/sealer.ts";
import { assertMayRouteData } from "#shared/domain/data-routing.ts";
import type { TenantPrincipal } from "#shared/domain/entities.ts";
import { conflict, DomainError, forbidden, notFound, validationError } from "#shared/domain/errors.ts";
import { assertMayActAs, ceilingOf } from "#shared/domain/grant-ceiling.ts";
import { isPlainObject, mergePatch } from "#shared/domain/merge-patch.ts";
import { hashKey, newApiKey, uuidv7 } from "#shared/ids.ts";
import type { Clock } from "#shared/ports/clock.ts";
import type { ProxyStore } from "#shared/ports/proxy-store.ts";
import type { Sandbox } from "#shared/ports/sandbox.ts";
import type { ApplicationReader, AuditLogStore, PageRequest } from "#shared/ports/stores.ts";
import {
  destinationError,
  nameMatcher,
  type OpenedProxy,
  openProxy,
  type ProxyTransform,
  proxyKeyBinding,
  sealProxy,
  transformCodeError,
} from "./proxy.ts";

export interface ProxyDeps {
  proxies: ProxyStore;
  applications: ApplicationReader;
  auditLog: AuditLogStore;
  sealer: Sealer;
  clock: Clock;
  config: { proxyAllowPrivate: boolean; mode: "local" | "aws" };
  /** Told when a transform is saved, so the tenant's runner exists before the first request (AWS). */
  sandbox?: Pick<Sandbox, "prepare">;
}

export interface ProxyInput {
  name: string;
  destination_url: string;
  request_transform?: ProxyTransform | null;
  response_transform?: ProxyTransform | null;
  application?: { id: string } | null;
  configuration?: Record<string, unknown> | null;
  require_auth?: boolean;
  allowed_hosts?: string[] | null;
}

const keyBinding = proxyKeyBinding;

/**
 * The proxy as managers see it: `application_id` in place of the application object, its configuration opened,
 * and its key (unsealed) only for a caller who could have created it, a member's own key (which covers any bound
 * application). The key acts as the bound application (anonymously when `require_auth` is false), so a narrower
 * key never sees it.
 */
async function view(deps: ProxyDeps, principal: TenantPrincipal, proxy: OpenedProxy) {
  const { sealed_key, key_hash, ...fields } = proxy;
  if (ceilingOf(principal) !== undefined) return fields;
  return { ...fields, key: await deps.sealer.open(keyBinding(proxy), sealed_key) };
}

/**
 * Field rules shared by create, PUT and PATCH; the application must be a public or private one of the tenant.
 * A proxy acts as its application (detokenization without `require_auth`, `req.svc` in transforms), so the
 * caller's ceiling must cover that application, and on updates the one it is bound to now (403). Creating a
 * proxy or changing where it sends detokenized data or what code sees it needs a member's own key (403,
 * data-routing.ts).
 */
async function assertValid(
  deps: ProxyDeps,
  principal: TenantPrincipal,
  proxy: Omit<OpenedProxy, "sealed_key" | "key_hash">,
  current?: OpenedProxy,
) {
  const errors: Record<string, string[]> = {};
  const requireHttps = !deps.config.proxyAllowPrivate;
  const destination = destinationError(proxy.destination_url, { requireHttps });
  if (destination) errors.destination_url = [destination];
  for (const field of ["request_transform", "response_transform"] as const) {
    const code = proxy[field]?.code;
    const problem = code === undefined ? undefined : transformCodeError(code);
    if (problem) errors[`${field}.code`] = [problem];
  }
  const application =
    proxy.application_id === undefined
      ? undefined
      : await deps.applications.get(principal.tenantId, proxy.application_id);
  if (proxy.application_id !== undefined && (!application || application.type === "management"))
    errors["application.id"] = ["must name a public or private application of the tenant"];
  if (Object.keys(errors).length > 0) throw validationError("The proxy is invalid.", errors);
  assertMayRouteData(principal, "proxy", proxy, current);
  if (application) assertMayActAs(principal, application, "configure a proxy acting as");
  const bound = current?.application_id;
  if (bound !== undefined && bound !== application?.id) {
    const previous = await deps.applications.get(principal.tenantId, bound);
    if (previous) assertMayActAs(principal, previous, "configure a proxy acting as");
  }
}

function fieldsOf(input: ProxyInput) {
  return {
    name: input.name,
    destination_url: input.destination_url,
    require_auth: input.require_auth ?? true,
    ...(input.request_transform ? { request_transform: { code: input.request_transform.code } } : {}),
    ...(input.response_transform ? { response_transform: { code: input.response_transform.code } } : {}),
    ...(input.application ? { application_id: input.application.id } : {}),
    ...(input.configuration ? { configuration: input.configuration } : {}),
    ...(input.allowed_hosts ? { allowed_hosts: input.allowed_hosts } : {}),
  };
}

export async function createProxy(deps: ProxyDeps, principal: TenantPrincipal, input: ProxyInput) {
  const now = deps.clock.now();
  const base = {
    id: uuidv7(now),
    tenant_id: principal.tenantId,
    ...fieldsOf(input),
    created_by: principal.application.id,
    created_at: now.toISOString(),
  };
  await assertValid(deps, principal, base);
  const key = newApiKey("proxy");
  const proxy: OpenedProxy = {
    ...base,
    sealed_key: await deps.sealer.seal(keyBinding(base), key),
    key_hash: hashKey(key),
  };
  await deps.proxies.create(
    await sealProxy(deps.sealer, proxy),
    auditEvent(deps, principal, "proxy", proxy.id, "create", "Proxy created"),
  );
  await prepareSandbox(deps, proxy);
  return view(deps, principal, proxy);
}

/** The proxy as stored (its configuration sealed). */
async function findStoredProxy(deps: ProxyDeps, principal: TenantPrincipal, id: string) {
  const proxy = await deps.proxies.get(principal.tenantId, id);
  if (!proxy) throw notFound("The proxy");
  return proxy;
}

/** The proxy with its configuration opened. */
async function findProxy(deps: ProxyDeps, principal: TenantPrincipal, id: string) {
  return openProxy(deps.sealer, await findStoredProxy(deps, principal, id));
}

export async function getProxy(deps: ProxyDeps, principal: TenantPrincipal, id: string) {
  const proxy = await findProxy(deps, principal, id);
  await recordEvents(deps, [auditEvent(deps, principal, "proxy", id, "read", "Proxy read")]);
  return view(deps, principal, proxy);
}

export async function listProxies(
  deps: ProxyDeps,
  principal: TenantPrincipal,
  filter: { ids?: string[]; name?: string },
  page: PageRequest,
) {
  const matches = filter.name ? nameMatcher(filter.name) : () => true;
  const all = (await deps.proxies.list(principal.tenantId)).filter(
    (p) => (!filter.ids?.length || filter.ids.includes(p.id)) && matches(p.name),
  );
  const offset = (page.page - 1) * page.size;
  const items = all.slice(offset, offset + page.size);
  await recordEvents(
    deps,
    items.map((p) => auditEvent(deps, principal, "proxy", p.id, "read", "Proxy read in a list")),
  );
  return {
    items: await Promise.all(items.map(async (p) => view(deps, principal, await openProxy(deps.sealer, p)))),
    total: all.length,
  };
}

async function save(deps: ProxyDeps, principal: TenantPrincipal, current: OpenedProxy, input: ProxyInput) {
  const next: OpenedProxy = {
    ...fieldsOf(input),
    id: current.id,
    tenant_id: current.tenant_id,
    sealed_key: current.sealed_key,
    key_hash: current.key_hash,
    ...(current.created_by ? { created_by: current.created_by } : {}),
    created_at: current.created_at,
    modified_by: principal.application.id,
    modified_at: deps.clock.now().toISOString(),
  };
  await assertValid(deps, principal, next, current);
  // Sealed afresh (a plain configuration of an older item is sealed by its next write).
  const saved = await deps.proxies.replace(
    await sealProxy(deps.sealer, next),
    auditEvent(deps, principal, "proxy", next.id, "update", "Proxy updated"),
  );
  if (!saved) {
    // Gone, or its key re-sealed by a rewrap since it was read (the update must not write the old seal back).
    if (await deps.proxies.get(principal.tenantId, next.id))
      throw conflict("The proxy changed meanwhile; retry.");
    throw notFound("The proxy");
  }
  await prepareSandbox(deps, next);
  return next;
}

/** After a save with transform code: best effort, never fails the save (Sandbox.prepare never rejects). */
async function prepareSandbox(deps: ProxyDeps, proxy: OpenedProxy): Promise<void> {
  if (proxy.request_transform || proxy.response_transform) await deps.sandbox?.prepare?.(proxy.tenant_id);
}

/** PUT: every field replaced (absent optional ones removed); the key stays. */
export async function replaceProxy(
  deps: ProxyDeps,
  principal: TenantPrincipal,
  id: string,
  input: ProxyInput,
) {
  const current = await findProxy(deps, principal, id);
  return view(deps, principal, await save(deps, principal, current, input));
}

/** PATCH (merge patch, answered 204): absent fields kept, null removes, configuration merged. */
export async function patchProxy(
  deps: ProxyDeps,
  principal: TenantPrincipal,
  id: string,
  patch: Partial<ProxyInput>,
) {
  const current = await findProxy(deps, principal, id);
  const currentInput: ProxyInput = {
    name: current.name,
    destination_url: current.destination_url,
    require_auth: current.require_auth,
    request_transform: current.request_transform ?? null,
    response_transform: current.response_transform ?? null,
    application: current.application_id ? { id: current.application_id } : null,
    configuration: current.configuration ?? null,
    allowed_hosts: current.allowed_hosts ?? null,
  };
  const merged = mergePatch(currentInput, patch) as ProxyInput;
  if (
    patch.configuration !== undefined &&
    patch.configuration !== null &&
    isPlainObject(current.configuration)
  )
    merged.configuration = mergePatch(current.configuration, patch.configuration) as Record<string, unknown>;
  if (!merged.name || !merged.destination_url)
    throw validationError("name and destination_url cannot be removed.", {
      ...(merged.name ? {} : { name: ["is required"] }),
      ...(merged.destination_url ? {} : { destination_url: ["is required"] }),
    });
  await save(deps, principal, current, merged);
}

/**
 * POST /proxies/{id}/key/rotate: a new key, answered once to the member who asked; the old one stops at once here
 * and in other warm processes within SVC_AUTH_CACHE_SECONDS. The key is shown to members' own keys, so one is
 * rotated when someone who saw it should no longer hold it (a member removed: their keys end, a key they read
 * does not). Only a member's own key may rotate: only such a key is shown the proxy's key.
 */
export async function rotateProxyKey(deps: ProxyDeps, principal: TenantPrincipal, id: string) {
  if (ceilingOf(principal) !== undefined)
    throw forbidden(
      "Rotating a proxy's key takes a member's own key (only such a key is shown the proxy's key).",
    );
  const stored = await findStoredProxy(deps, principal, id);
  const current = await openProxy(deps.sealer, stored);
  const key = newApiKey("proxy");
  const next = {
    sealed_key: await deps.sealer.seal(keyBinding(current), key),
    key_hash: hashKey(key),
    // A plain configuration of an older item is sealed by this write too (unless merged past the bound before
    // configurations were sealed: it stays plain, as a rewrap leaves it, and the key still rotates).
    ...(stored.sealed_configuration === undefined ? await sealedConfigurationOf(deps, current) : {}),
  };
  const audit = auditEvent(deps, principal, "proxy", id, "update", "Proxy key rotated");
  if (!(await deps.proxies.rotateKey(stored, next, audit)))
    throw conflict("The proxy changed meanwhile (or is gone); retry.");
  return view(deps, principal, { ...current, sealed_key: next.sealed_key, key_hash: next.key_hash });
}

/** The stored proxy's configuration field as `proxy`'s configuration sealed (nothing when it has none). */
async function sealedConfigurationOf(deps: ProxyDeps, proxy: OpenedProxy) {
  try {
    const { sealed_configuration } = await sealProxy(deps.sealer, proxy);
    return sealed_configuration === undefined ? {} : { sealed_configuration };
  } catch (error) {
    // An older item whose configuration cannot be sealed (too large, alone or sealed beside its code) stays plain:
    // the key still rotates.
    if (error instanceof DomainError && error.kind === "invalid") return {};
    throw error;
  }
}

export async function deleteProxy(deps: ProxyDeps, principal: TenantPrincipal, id: string): Promise<void> {
  const proxy = await findStoredProxy(deps, principal, id);
  const deleted = await deps.proxies.delete(
    proxy,
    auditEvent(deps, principal, "proxy", id, "delete", "Proxy deleted"),
  );
  if (!deleted) throw notFound("The proxy");
}
