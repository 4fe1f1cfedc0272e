/**
 * Every token type's own mask and fingerprint expression: a create that keeps them checks neither (create.ts), so
 * they must pass the checks a caller's mask and fingerprint expression do, and render on valid data.
 */
import { describe, expect, it } from "vitest";
import type { TokenDeps } from "#shared/domain/tokens/deps.ts";
import { checkFingerprintExpression, checkMask } from "#shared/domain/tokens/expression-checks.ts";
import { createExpressionEngine } from "#shared/domain/tokens/expressions.ts";
import { TOKEN_TYPES } from "#shared/domain/tokens/types.ts";

const deps = { expressions: createExpressionEngine() } as unknown as TokenDeps;

describe("token types", () => {
  it.each(Object.keys(TOKEN_TYPES))(
    "%s: its own mask and fingerprint expression pass a caller's checks",
    async (type) => {
      const spec = TOKEN_TYPES[type as keyof typeof TOKEN_TYPES] as { mask?: unknown; fingerprint: string };
      if (spec.mask !== undefined) await expect(checkMask(deps, spec.mask)).resolves.toBeUndefined();
      await expect(checkFingerprintExpression(deps, spec.fingerprint)).resolves.toBeUndefined();
    },
  );

  it("a broken mask or constant fingerprint fails those checks (so the test above can fail)", async () => {
    await expect(checkMask(deps, { number: "{{ data.number | no_such_filter }}" })).rejects.toThrow();
    await expect(checkFingerprintExpression(deps, "{{ 'constant' }}")).rejects.toThrow();
  });
});
