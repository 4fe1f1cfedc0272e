import { validationError } from "#shared/domain/errors.ts";
import { storableProblem } from "#shared/domain/storable.ts";
import type { TokenDeps } from "./deps.ts";
import { ExpressionError } from "./expressions.ts";
import { MAX_MASK_BYTES } from "./token.ts";

/**
 * Renders a caller's expression; an expression error is the caller's 400, naming the field, never the data.
 * `dataDependent`: the data is not (all) the caller's own, so the answer is the same whatever the error was.
 */
export async function renderField(
  deps: TokenDeps,
  field: string,
  template: string,
  data: unknown,
  options: { dataDependent?: boolean } = {},
): Promise<string> {
  try {
    return await deps.expressions.render(template, { data });
  } catch (error) {
    if (!(error instanceof ExpressionError)) throw error;
    if (options.dataDependent)
      throw validationError(`The ${field} could not be evaluated on the token's data.`);
    throw validationError(`The ${field} could not be evaluated.`, { [field]: [error.message] });
  }
}

export async function checkExpression(deps: TokenDeps, field: string, template: string): Promise<void> {
  try {
    await deps.expressions.validate(template);
  } catch (error) {
    if (error instanceof ExpressionError)
      throw validationError(`The ${field} is not a valid expression.`, { [field]: [error.message] });
    throw error;
  }
}

/**
 * A fingerprint expression must read `data` (a global of the parsed template, not one it assigns itself):
 * a constant would give every token one fingerprint, and deduplication would hand back unrelated tokens.
 */
export async function checkFingerprintExpression(deps: TokenDeps, template: string): Promise<void> {
  await checkExpression(deps, "fingerprint_expression", template);
  if (!(await deps.expressions.variablesRead(template)).includes("data"))
    throw validationError("The fingerprint_expression must depend on the token's data.", {
      fingerprint_expression: ["must read data, e.g. {{ data | stringify }}"],
    });
}

/** A mask the store keeps (also after a merge patch), whose every string leaf is a valid expression. */
export async function checkMask(deps: TokenDeps, mask: unknown): Promise<void> {
  const problem = storableProblem(mask, MAX_MASK_BYTES);
  if (problem) throw validationError("The mask cannot be stored.", { mask: [problem] });
  await checkMaskExpressions(deps, mask);
}

async function checkMaskExpressions(deps: TokenDeps, mask: unknown, path = "mask"): Promise<void> {
  if (typeof mask === "string") await checkExpression(deps, path, mask);
  else if (Array.isArray(mask)) {
    for (const [i, item] of mask.entries()) await checkMaskExpressions(deps, item, `${path}.${i}`);
  } else if (typeof mask === "object" && mask !== null)
    for (const [key, value] of Object.entries(mask))
      await checkMaskExpressions(deps, value, `${path}.${key}`);
}

/**
 * Evaluates a mask on the data it is about to be stored with. Every write that stores a mask, or data under
 * one, calls this before it writes: a mask that cannot render on its data is the caller's 400 and nothing is
 * stored (otherwise every masked read of the token, and every list holding it, would fail). `dataDependent`:
 * the data is not (all) the caller's own, so the answer is the same whatever the error was.
 */
export async function renderMask(
  deps: TokenDeps,
  mask: unknown,
  data: unknown,
  options: { dataDependent?: boolean } = {},
): Promise<unknown> {
  try {
    return await deps.expressions.evaluateStructure(mask, { data });
  } catch (error) {
    if (!(error instanceof ExpressionError)) throw error;
    if (options.dataDependent) throw validationError("The mask could not be evaluated on the token's data.");
    throw validationError("The mask could not be evaluated on the token's data.", { mask: [error.message] });
  }
}
