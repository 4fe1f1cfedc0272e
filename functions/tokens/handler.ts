import type { APIGatewayProxyEventV2 } from "aws-lambda";
import type { Routes } from "#shared/api/index.ts";
import { tokensRoutes } from "#shared/api/tokens.ts";
import { composeCore } from "#shared/composition/core.ts";
import { tokenDomain } from "#shared/composition/token-domain.ts";
import { type Config, config } from "#shared/config.ts";
import { validationError } from "#shared/domain/errors.ts";
import { isPlainObject } from "#shared/domain/merge-patch.ts";
import { FORBIDDEN_KEY_MESSAGE, hasForbiddenSegment } from "#shared/domain/safe-keys.ts";
import { createToken } from "#shared/domain/tokens/create.ts";
import { detokenizeBody } from "#shared/domain/tokens/detokenize-body.ts";
import { listTokensByCursor } from "#shared/domain/tokens/list-cursor.ts";
import { deleteToken, getToken, listTokens, patchToken } from "#shared/domain/tokens/manage.ts";
import { checkStillReadable, presentAgain, presentCreated } from "#shared/domain/tokens/replay.ts";
import { searchTokens } from "#shared/domain/tokens/search.ts";
import { tokenize } from "#shared/domain/tokens/tokenize.ts";
import { TOKEN_ENTITY_TYPES } from "#shared/domain/tokens/types.ts";
import { joinTransaction } from "#shared/domain/transactions.ts";
import { createHttpHandler, type GroupHandlers, type GroupReplays, replayAs } from "#shared/http/lambda.ts";
import { envelopeOfFittingPage, pageRequest } from "#shared/http/pagination.ts";
import { header } from "#shared/http/request-state.ts";

/** `metadata.<key>=value` query parameters; a repeated key counts once (its first value). */
function metadataFilter(query: Record<string, unknown>): Record<string, string> | undefined {
  const entries = Object.entries(query)
    .filter(([name]) => name.startsWith("metadata.") && name.length > "metadata.".length)
    .map(([name, value]) => [name.slice("metadata.".length), String([value].flat()[0])] as const);
  return entries.length ? Object.fromEntries(entries) : undefined;
}

/**
 * `metadata={"key":"value"}` (the form the hosted vault's SDK sends) merged with `metadata.<key>=value`
 * parameters (which win for the same key).
 */
function metadataQuery(query: Record<string, unknown>): Record<string, string> | undefined {
  let fromJson: Record<string, string> = {};
  if (typeof query.metadata === "string") {
    let parsed: unknown;
    try {
      parsed = JSON.parse(query.metadata);
    } catch {
      parsed = undefined;
    }
    if (!isPlainObject(parsed) || !Object.values(parsed).every((v) => typeof v === "string"))
      throw validationError("metadata must be a JSON object of strings.", {
        metadata: ['a JSON object of strings, e.g. {"customer":"c-1"}'],
      });
    // Its keys are names from a request, as body keys and query names are (checked at the edge for those).
    if (Object.keys(parsed).some(hasForbiddenSegment))
      throw validationError("A metadata key is reserved.", { metadata: [FORBIDDEN_KEY_MESSAGE] });
    fromJson = parsed as Record<string, string>;
  }
  const merged = { ...fromJson, ...metadataFilter(query) };
  return Object.keys(merged).length ? merged : undefined;
}

/** SVC-TRANSACTION-ID as sent, on a route that refuses it (transactional routes get it as `transactionId`). */
const transactionHeader = (event: APIGatewayProxyEventV2) => header(event, "svc-transaction-id");

/** The adapters the tokens routes use, and no others (see shared/composition/). */
export function compose(cfg: Config) {
  const core = composeCore(cfg);
  return { ...core, ...tokenDomain(core) };
}
export type TokensDeps = ReturnType<typeof compose>;

export const routes: GroupHandlers<Routes, "tokens", TokensDeps> = {
  createToken: async ({ deps, principal, body, transactionId }) => ({
    status: 201,
    body: await createToken(deps, principal, body, await joinTransaction(deps, principal, transactionId)),
  }),
  listTokens: async ({ deps, principal, query }) => {
    const page = await listTokens(
      deps,
      principal,
      { ids: query.id, types: query.type, metadata: metadataFilter(query) },
      pageRequest(query),
    );
    return { status: 200, body: envelopeOfFittingPage(page, query) };
  },
  tokenize: async ({ deps, principal, body, event }) => {
    // A batch is its own transaction: joining the caller's would need its commit to fit one write.
    if (transactionHeader(event) !== undefined)
      throw validationError("POST /tokenize does not join transactions; send it without SVC-TRANSACTION-ID.");
    return { status: 201, body: await tokenize(deps, principal, body) };
  },
  detokenize: async ({ deps, principal, body }) => ({
    status: 200,
    body: await detokenizeBody(deps, principal, body),
  }),
  listTokensV2: async ({ deps, principal, query }) => {
    const metadata = metadataQuery(query);
    const filters = {
      ...(query.type ? { types: query.type } : {}),
      ...(query.container !== undefined ? { container: query.container } : {}),
      ...(query.fingerprint !== undefined ? { fingerprint: query.fingerprint } : {}),
      ...(metadata ? { metadata } : {}),
    };
    return { status: 200, body: await listTokensByCursor(deps, principal, filters, query.size, query.start) };
  },
  searchTokens: async ({ deps, principal, body }) => ({
    status: 200,
    body: await searchTokens(deps, principal, body),
  }),
  getToken: async ({ deps, principal, params }) => ({
    status: 200,
    body: await getToken(deps, principal, params.id),
  }),
  patchToken: async ({ deps, principal, params, body, transactionId }) => ({
    status: 200,
    body: await patchToken(
      deps,
      principal,
      params.id,
      body,
      await joinTransaction(deps, principal, transactionId),
    ),
  }),
  deleteToken: async ({ deps, principal, params, transactionId }) => {
    await deleteToken(deps, principal, params.id, await joinTransaction(deps, principal, transactionId));
    return { status: 204 };
  },
};

/**
 * Idempotent replays: tokens an answer presented are presented again (never stored); a create whose answer was
 * lost is answered with the token it created. A PATCH whose answer was lost answers 409 (its answer rendered the
 * mask stored before it, which is gone): it is not run again.
 */
export const replays: GroupReplays<Routes, "tokens", TokensDeps> = {
  presentToken: presentAgain,
  checkRead: checkStillReadable,
  effects: {
    createToken: replayAs(TOKEN_ENTITY_TYPES, "create", 201, ({ deps, principal }, id, effect) =>
      presentCreated(deps, principal, id, effect.at),
    ),
  },
};

export const handler = createHttpHandler(tokensRoutes, "tokens", routes, () => compose(config()), replays);
