/** The react scenario's set-up (docs/performance.md, "React"): a trivial formula, warm. */
import { call } from "./api.ts";

/** The formula: no request parameters, no configuration, answers a constant. */
export const TRIVIAL_FORMULA = "module.exports = async (req) => ({ raw: { ok: true } });";

/** The body of every react request. */
export const REACT_BODY = JSON.stringify({ args: {} });

/**
 * Creates the formula and a reactor whose application is `applicationId` (a private application), checks
 * one react, and answers the path to load.
 */
export async function setUpReactor(options: {
  serviceUrl: string;
  managementKey: string;
  applicationId: string;
  useKey: string;
}): Promise<string> {
  const { serviceUrl, managementKey } = options;
  const formula = await call<{ id: string }>(
    serviceUrl,
    "POST",
    "/reactor-formulas",
    managementKey,
    {
      name: "bench trivial",
      type: "private",
      code: TRIVIAL_FORMULA,
      configuration: [],
      request_parameters: [],
    },
    201,
  );
  const reactor = await call<{ id: string }>(
    serviceUrl,
    "POST",
    "/reactors",
    managementKey,
    {
      name: "bench",
      formula: { id: formula.id },
      configuration: {},
      application: { id: options.applicationId },
    },
    201,
  );
  const path = `/reactors/${encodeURIComponent(reactor.id)}/react`;
  const answer = await call<{ raw?: { ok?: boolean } }>(
    serviceUrl,
    "POST",
    path,
    options.useKey,
    REACT_BODY,
    200,
  );
  if (answer.raw?.ok !== true) throw new Error(`the react check answered ${JSON.stringify(answer)}`);
  return path;
}
