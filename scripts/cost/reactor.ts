/** A reactor to measure: a trivial formula (the bench's react scenario had it; the cost script is its only user now). */
import { call } from "../api-call.ts";

/** The formula: no request parameters, no configuration, answers a constant. */
export const TRIVIAL_FORMULA = "module.exports = async (req) => ({ raw: { ok: true } });";

/** The body of every react request. */
export const REACT_BODY = JSON.stringify({ args: {} });

/**
 * Creates a formula (by default the trivial one) and a reactor whose application is `applicationId` (a private
 * application), checks one react answers `raw.ok: true`, and answers the path to load.
 */
export async function setUpReactor(
  options: { serviceUrl: string; managementKey: string; applicationId: string; useKey: string },
  reactor: { name: string; code?: string } = { name: "bench trivial" },
): Promise<string> {
  const { serviceUrl, managementKey } = options;
  const { name, code = TRIVIAL_FORMULA } = reactor;
  const formula = await call<{ id: string }>(
    serviceUrl,
    "POST",
    "/reactor-formulas",
    managementKey,
    { name, type: "private", code, configuration: [], request_parameters: [] },
    201,
  );
  const created = await call<{ id: string }>(
    serviceUrl,
    "POST",
    "/reactors",
    managementKey,
    { name, formula: { id: formula.id }, configuration: {}, application: { id: options.applicationId } },
    201,
  );
  const path = `/reactors/${encodeURIComponent(created.id)}/react`;
  const answer = await call<{ raw?: { ok?: boolean } }>(
    serviceUrl,
    "POST",
    path,
    options.useKey,
    REACT_BODY,
    200,
  );
  if (answer.raw?.ok !== true) throw new Error(`the ${name} check answered ${JSON.stringify(answer)}`);
  return path;
}
