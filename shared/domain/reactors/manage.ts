import { auditEvent, recordEvents } from "#shared/domain/audit-entry.ts";
import type { Sealer } from "#shared/domain/crypto/sealer.ts";
import { assertMayRouteData } from "#shared/domain/data-routing.ts";
import type { TenantPrincipal } from "#shared/domain/entities.ts";
import { conflict, DomainError, notFound, validationError } from "#shared/domain/errors.ts";
import { assertMayActAs, ceilingOf } from "#shared/domain/grant-ceiling.ts";
import { isPlainObject, mergePatch } from "#shared/domain/merge-patch.ts";
import { nameMatcher, transformCodeError } from "#shared/domain/proxies/proxy.ts";
import { uuidv7 } from "#shared/ids.ts";
import type { Clock } from "#shared/ports/clock.ts";
import type { ReactorStore } from "#shared/ports/reactor-store.ts";
import type { Sandbox } from "#shared/ports/sandbox.ts";
import type { ApplicationReader, AuditLogStore, PageRequest } from "#shared/ports/stores.ts";
import { cast } from "./args.ts";
import {
  type OpenedReactor,
  openReactor,
  type StoredFormula,
  type StoredReactor,
  sealReactor,
} from "./model.ts";

export interface ReactorDeps {
  reactors: ReactorStore;
  applications: ApplicationReader;
  auditLog: AuditLogStore;
  /** Seals reactors' configurations, and opens them. */
  sealer: Pick<Sealer, "seal" | "open">;
  clock: Clock;
  /** Told when formula code is saved, so the tenant's runner exists before the first react (AWS). */
  sandbox?: Pick<Sandbox, "prepare">;
}

/** 422: the formula's code cannot run (docs/reactors.md, "Errors"). */
export const invalidCode = (detail: string) =>
  new DomainError("unprocessable", detail, { code: "invalid-code" });

function page<T>(items: T[], request: PageRequest) {
  const offset = (request.page - 1) * request.size;
  return { items: items.slice(offset, offset + request.size), total: items.length };
}

export type FormulaInput = Omit<
  StoredFormula,
  "id" | "tenant_id" | "created_by" | "created_at" | "modified_by" | "modified_at"
>;

function assertFormula(input: FormulaInput) {
  const problem = transformCodeError(input.code);
  if (problem) throw invalidCode(`The formula's code ${problem}.`);
  const names = [
    ...input.configuration.map((c) => c.name),
    ...input.request_parameters.map((p) => `param:${p.name}`),
  ];
  const duplicates = names.filter((n, i) => names.indexOf(n) !== i);
  if (duplicates.length)
    throw validationError("Names must be unique.", { configuration: [`duplicate ${duplicates.join(", ")}`] });
}

/** Creating a formula, like changing what its code sees, needs a member's own key (403, data-routing.ts). */
export async function createFormula(deps: ReactorDeps, principal: TenantPrincipal, input: FormulaInput) {
  assertFormula(input);
  assertMayRouteData(principal, "reactor_formula", input);
  const now = deps.clock.now();
  const formula: StoredFormula = {
    ...input,
    id: uuidv7(now),
    tenant_id: principal.tenantId,
    created_by: principal.application.id,
    created_at: now.toISOString(),
  };
  await deps.reactors.put(
    "formula",
    formula,
    auditEvent(deps, principal, "reactor_formula", formula.id, "create", "Reactor formula created"),
    "create",
  );
  await deps.sandbox?.prepare?.(formula.tenant_id);
  return formula;
}

async function findFormula(deps: ReactorDeps, principal: TenantPrincipal, id: string) {
  const formula = await deps.reactors.get<StoredFormula>("formula", principal.tenantId, id);
  if (!formula) throw notFound("The reactor formula");
  return formula;
}

export async function getFormula(deps: ReactorDeps, principal: TenantPrincipal, id: string) {
  const formula = await findFormula(deps, principal, id);
  await recordEvents(deps, [
    auditEvent(deps, principal, "reactor_formula", id, "read", "Reactor formula read"),
  ]);
  return formula;
}

export async function listFormulas(deps: ReactorDeps, principal: TenantPrincipal, request: PageRequest) {
  const result = page(await deps.reactors.list<StoredFormula>("formula", principal.tenantId), request);
  await recordEvents(
    deps,
    result.items.map((f) =>
      auditEvent(deps, principal, "reactor_formula", f.id, "read", "Reactor formula read in a list"),
    ),
  );
  return result;
}

export async function replaceFormula(
  deps: ReactorDeps,
  principal: TenantPrincipal,
  id: string,
  input: FormulaInput,
) {
  const current = await findFormula(deps, principal, id);
  assertFormula(input);
  await assertMayActAsEach(
    deps,
    principal,
    (await deps.reactors.list<StoredReactor>("reactor", principal.tenantId))
      .filter((r) => r.formula_id === id)
      .map((r) => r.application_id),
    "change the code of a formula that reactors run as",
  );
  const { allowed_hosts: _previous, ...kept } = current; // PUT: an absent allowed_hosts is removed
  const next: StoredFormula = {
    ...kept,
    ...input,
    modified_by: principal.application.id,
    modified_at: deps.clock.now().toISOString(),
  };
  // Reactors without an application run it too, on their callers' detokenized args.
  assertMayRouteData(principal, "reactor_formula", next, current);
  if (
    !(await deps.reactors.put(
      "formula",
      next,
      auditEvent(deps, principal, "reactor_formula", id, "update", "Reactor formula updated"),
      "replace",
    ))
  )
    throw notFound("The reactor formula");
  await deps.sandbox?.prepare?.(next.tenant_id);
  return next;
}

export async function deleteFormula(deps: ReactorDeps, principal: TenantPrincipal, id: string) {
  const used = (await deps.reactors.list<StoredReactor>("reactor", principal.tenantId)).some(
    (r) => r.formula_id === id,
  );
  if (used) throw conflict("Reactors still use this formula; delete them first.");
  if (
    !(await deps.reactors.delete(
      "formula",
      principal.tenantId,
      id,
      auditEvent(deps, principal, "reactor_formula", id, "delete", "Reactor formula deleted"),
    ))
  )
    throw notFound("The reactor formula");
}

export interface ReactorInput {
  name: string;
  configuration: Record<string, unknown>;
  application?: { id: string } | null;
  /** The reactor's own code, instead of a formula's. */
  code?: string;
}

/** 422 for a reactor's own code that cannot run, as for a formula's. */
function assertCode(code: string) {
  const problem = transformCodeError(code);
  if (problem) throw invalidCode(`The reactor's code ${problem}.`);
}

const eitherFormulaOrCode = (detail: string) => {
  const rule = ["a formula or its own code, never both"];
  return validationError(detail, { code: rule, "formula.id": rule });
};

/**
 * Whether `principal` may change a reactor's own code, and so may read it: `reactor:update` and the right to
 * change what code sees callers' data (a member's own key, data-routing.ts). Code may embed what it needs to
 * call out (credentials of the destinations), so it is shown no wider than it may be written.
 */
function mayChangeCode(principal: TenantPrincipal) {
  return (
    principal.kind === "application" &&
    ceilingOf(principal) === undefined &&
    principal.application.permissions.includes("reactor:update")
  );
}

/** Configuration must hold exactly the formula's declared names, each castable to its type. */
function checkedConfiguration(formula: StoredFormula, configuration: Record<string, unknown>) {
  const errors: Record<string, string[]> = {};
  const result: Record<string, unknown> = {};
  for (const declared of formula.configuration) {
    if (!Object.hasOwn(configuration, declared.name) || configuration[declared.name] === null) {
      errors[`configuration.${declared.name}`] = ["is required by the formula"];
      continue;
    }
    const value = cast(configuration[declared.name], declared.type);
    if (value === undefined) errors[`configuration.${declared.name}`] = [`must be a ${declared.type}`];
    else result[declared.name] = value;
  }
  for (const name of Object.keys(configuration))
    if (!formula.configuration.some((c) => c.name === name))
      errors[`configuration.${name}`] = ["is not declared by the formula"];
  if (Object.keys(errors).length)
    throw validationError("The configuration does not satisfy the formula.", errors);
  return result;
}

/**
 * 403 unless the caller's ceiling covers each of these applications (grant-ceiling.ts): a reactor runs its
 * formula as its application, so whoever binds it, or changes what runs with its rights, must hold as much.
 * Applications since deleted give nothing to run as and are skipped.
 */
async function assertMayActAsEach(
  deps: ReactorDeps,
  principal: TenantPrincipal,
  applicationIds: (string | undefined)[],
  action: string,
) {
  for (const id of new Set(applicationIds)) {
    if (id === undefined) continue;
    const application = await deps.applications.get(principal.tenantId, id);
    if (application) assertMayActAs(principal, application, action);
  }
}

/** The application a reactor is bound to: a public or private one of the tenant (400), covered by the caller (403). */
async function checkedApplication(
  deps: ReactorDeps,
  principal: TenantPrincipal,
  application: { id: string } | null | undefined,
) {
  if (!application) return undefined;
  const found = await deps.applications.get(principal.tenantId, application.id);
  if (!found || found.type === "management")
    throw validationError("The application is invalid.", {
      "application.id": ["must name a public or private application of the tenant"],
    });
  assertMayActAs(principal, found, "bind a reactor to");
  return found.id;
}

/** A reactor as answered: its formula, or its own code (to keys that may change it only). */
async function view(deps: ReactorDeps, principal: TenantPrincipal, reactor: OpenedReactor) {
  const { formula_id, application_id, code, ...fields } = reactor;
  const formula =
    formula_id === undefined
      ? undefined
      : ((await deps.reactors.get<StoredFormula>("formula", reactor.tenant_id, formula_id)) ?? {
          id: formula_id,
        });
  return {
    ...fields,
    ...(formula ? { formula } : {}),
    ...(code !== undefined && mayChangeCode(principal) ? { code } : {}),
    ...(application_id ? { application: { id: application_id } } : {}),
  };
}

/** What a reactor runs: a formula of the tenant with its checked configuration, or its own code (400 for both or neither). */
async function runsWhat(
  deps: ReactorDeps,
  principal: TenantPrincipal,
  input: ReactorInput & { formula?: { id: string } },
): Promise<Pick<OpenedReactor, "formula_id" | "code" | "configuration">> {
  if (input.formula && input.code !== undefined)
    throw eitherFormulaOrCode("A reactor runs a formula or its own code, not both.");
  if (input.code !== undefined) {
    assertCode(input.code);
    return { code: input.code, configuration: input.configuration };
  }
  if (!input.formula) throw eitherFormulaOrCode("A reactor needs formula.id or its own code.");
  const formula = await deps.reactors.get<StoredFormula>("formula", principal.tenantId, input.formula.id);
  if (!formula)
    throw validationError("The formula does not exist.", {
      "formula.id": ["must name a reactor formula of the tenant"],
    });
  return { formula_id: formula.id, configuration: checkedConfiguration(formula, input.configuration) };
}

export async function createReactor(
  deps: ReactorDeps,
  principal: TenantPrincipal,
  input: ReactorInput & { formula?: { id: string } },
) {
  const runs = await runsWhat(deps, principal, input);
  const now = deps.clock.now();
  const applicationId = await checkedApplication(deps, principal, input.application);
  const reactor: OpenedReactor = {
    id: uuidv7(now),
    tenant_id: principal.tenantId,
    name: input.name,
    ...runs,
    ...(applicationId ? { application_id: applicationId } : {}),
    created_by: principal.application.id,
    created_at: now.toISOString(),
  };
  assertMayRouteData(principal, "reactor", reactor);
  await deps.reactors.put(
    "reactor",
    await sealReactor(deps.sealer, reactor),
    auditEvent(deps, principal, "reactor", reactor.id, "create", "Reactor created"),
    "create",
  );
  if (reactor.code !== undefined) await deps.sandbox?.prepare?.(reactor.tenant_id);
  return view(deps, principal, reactor);
}

/** The reactor with its configuration opened. */
export async function findReactor(deps: ReactorDeps, principal: TenantPrincipal, id: string) {
  const reactor = await deps.reactors.get<StoredReactor>("reactor", principal.tenantId, id);
  if (!reactor) throw notFound("The reactor");
  return openReactor(deps.sealer, reactor);
}

export async function getReactor(deps: ReactorDeps, principal: TenantPrincipal, id: string) {
  const reactor = await findReactor(deps, principal, id);
  await recordEvents(deps, [auditEvent(deps, principal, "reactor", id, "read", "Reactor read")]);
  return view(deps, principal, reactor);
}

export async function listReactors(
  deps: ReactorDeps,
  principal: TenantPrincipal,
  filter: { ids?: string[]; name?: string },
  request: PageRequest,
) {
  const matches = filter.name ? nameMatcher(filter.name) : () => true;
  const all = (await deps.reactors.list<StoredReactor>("reactor", principal.tenantId)).filter(
    (r) => (!filter.ids?.length || filter.ids.includes(r.id)) && matches(r.name),
  );
  const result = page(all, request);
  await recordEvents(
    deps,
    result.items.map((r) => auditEvent(deps, principal, "reactor", r.id, "read", "Reactor read in a list")),
  );
  const items = await Promise.all(
    result.items.map(async (r) => view(deps, principal, await openReactor(deps.sealer, r))),
  );
  return { items, total: result.total };
}

async function saveReactor(
  deps: ReactorDeps,
  principal: TenantPrincipal,
  current: OpenedReactor,
  input: ReactorInput,
) {
  // A formula reactor keeps its formula (PUT and PATCH cannot name another); one with its own code keeps it
  // unless a new one is given.
  let runs: Pick<OpenedReactor, "formula_id" | "code" | "configuration">;
  if (current.formula_id !== undefined) {
    if (input.code !== undefined)
      throw eitherFormulaOrCode("This reactor runs a formula; it cannot also have its own code.");
    const formula = await deps.reactors.get<StoredFormula>("formula", principal.tenantId, current.formula_id);
    if (!formula) throw notFound("The reactor's formula");
    runs = { formula_id: formula.id, configuration: checkedConfiguration(formula, input.configuration) };
  } else {
    const code = input.code ?? current.code ?? "";
    assertCode(code);
    runs = { code, configuration: input.configuration };
  }
  await assertMayActAsEach(deps, principal, [current.application_id], "change a reactor acting as");
  const applicationId = await checkedApplication(deps, principal, input.application);
  const { application_id: _previous, formula_id: _formula, code: _code, ...rest } = current;
  const next: OpenedReactor = {
    ...rest,
    name: input.name,
    ...runs,
    ...(applicationId ? { application_id: applicationId } : {}),
    modified_by: principal.application.id,
    modified_at: deps.clock.now().toISOString(),
  };
  assertMayRouteData(principal, "reactor", next, current);
  if (
    !(await deps.reactors.put(
      "reactor",
      // Sealed afresh (a plain configuration of an older item is sealed by its next write).
      await sealReactor(deps.sealer, next),
      auditEvent(deps, principal, "reactor", next.id, "update", "Reactor updated"),
      "replace",
    ))
  )
    throw notFound("The reactor");
  if (next.code !== undefined && next.code !== current.code) await deps.sandbox?.prepare?.(next.tenant_id);
  return next;
}

export async function replaceReactor(
  deps: ReactorDeps,
  principal: TenantPrincipal,
  id: string,
  input: ReactorInput,
) {
  const current = await findReactor(deps, principal, id);
  return view(deps, principal, await saveReactor(deps, principal, current, input));
}

export async function patchReactor(
  deps: ReactorDeps,
  principal: TenantPrincipal,
  id: string,
  patch: Partial<ReactorInput>,
) {
  const current = await findReactor(deps, principal, id);
  const configuration =
    patch.configuration === undefined
      ? current.configuration
      : (mergePatch(current.configuration, patch.configuration) as Record<string, unknown>);
  await saveReactor(deps, principal, current, {
    name: patch.name ?? current.name,
    ...(patch.code !== undefined ? { code: patch.code } : {}),
    configuration: isPlainObject(configuration) ? configuration : {},
    application:
      patch.application === undefined
        ? current.application_id
          ? { id: current.application_id }
          : null
        : patch.application,
  });
}

export async function deleteReactor(deps: ReactorDeps, principal: TenantPrincipal, id: string) {
  if (
    !(await deps.reactors.delete(
      "reactor",
      principal.tenantId,
      id,
      auditEvent(deps, principal, "reactor", id, "delete", "Reactor deleted"),
    ))
  )
    throw notFound("The reactor");
}
