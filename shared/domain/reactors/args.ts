import { isPlainObject } from "#shared/domain/merge-patch.ts";
import { FORBIDDEN_KEY_MESSAGE, hasForbiddenSegment, nullObject } from "#shared/domain/safe-keys.ts";

export type ParameterType = "string" | "number" | "boolean";

export interface RequestParameter {
  name: string;
  type: ParameterType;
  description?: string;
  optional?: boolean;
}

export type ArgsResult =
  | { ok: true; args: Record<string, unknown> }
  | { ok: false; errors: Record<string, string[]> };

function getPath(source: unknown, path: string[]): { found: boolean; value?: unknown } {
  let current: unknown = source;
  for (const part of path) {
    if (!isPlainObject(current) || !Object.hasOwn(current, part)) return { found: false };
    current = current[part];
  }
  return { found: true, value: current };
}

/**
 * Writes `value` at `path`, creating null-prototype objects on the way: whatever the segments are, only own
 * properties of objects built here are ever written (the schemas also refuse the reserved segments).
 */
function setPath(target: Record<string, unknown>, path: string[], value: unknown): void {
  let current = target;
  for (const part of path.slice(0, -1)) {
    const next = Object.hasOwn(current, part) ? current[part] : undefined;
    if (!isPlainObject(next)) current[part] = nullObject();
    current = current[part] as Record<string, unknown>;
  }
  current[path.at(-1) as string] = value;
}

/** Casts a value to the declared type where that is lossless; undefined when it cannot be cast. */
export function cast(value: unknown, type: ParameterType): unknown {
  if (type === "string") {
    if (typeof value === "string") return value;
    if (typeof value === "number" || typeof value === "boolean") return String(value);
    return undefined;
  }
  if (type === "number") {
    if (typeof value === "number" && Number.isFinite(value)) return value;
    if (typeof value === "string" && value.trim() !== "" && Number.isFinite(Number(value)))
      return Number(value);
    return undefined;
  }
  if (typeof value === "boolean") return value;
  if (value === "true" || value === 1) return true;
  if (value === "false" || value === 0) return false;
  return undefined;
}

/**
 * The spec's six rules, applied after detokenization:
 * 1. no declared parameters: any args pass as they are;
 * 2. a declared name matches exactly (case-sensitive), nested names with dots (`user.address.city`);
 * 3. undeclared args are removed;
 * 4. a parameter with optional false must be present;
 * 5. a value of another type is cast when possible, else 400;
 * 6. (detokenization happened before, so one complex token can supply several parameters).
 */
export function validateArgs(args: unknown, parameters: readonly RequestParameter[]): ArgsResult {
  const given = args === undefined || args === null ? {} : args;
  if (!isPlainObject(given)) return { ok: false, errors: { args: ["must be an object"] } };
  if (parameters.length === 0) return { ok: true, args: given };
  const errors: Record<string, string[]> = nullObject();
  const validated: Record<string, unknown> = nullObject();
  for (const parameter of parameters) {
    if (hasForbiddenSegment(parameter.name)) {
      errors[`args.${parameter.name}`] = [FORBIDDEN_KEY_MESSAGE];
      continue;
    }
    const path = parameter.name.split(".");
    const { found, value } = getPath(given, path);
    if (!found || value === undefined || value === null) {
      if (!parameter.optional) errors[`args.${parameter.name}`] = ["is required"];
      continue;
    }
    const casted = cast(value, parameter.type);
    if (casted === undefined) errors[`args.${parameter.name}`] = [`must be a ${parameter.type}`];
    else setPath(validated, path, casted);
  }
  return Object.keys(errors).length > 0 ? { ok: false, errors } : { ok: true, args: validated };
}
