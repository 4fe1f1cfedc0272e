import { createToken } from "#shared/domain/tokens/create.ts";
import { deleteToken, getToken, listTokens, patchToken } from "#shared/domain/tokens/manage.ts";
import { createHttpHandler } from "#shared/http/lambda.ts";
import { envelope, pageRequest } from "#shared/http/pagination.ts";

/** `metadata.<key>=value` query parameters; a repeated key counts once (its first value). */
function metadataFilter(query: Record<string, unknown>): Record<string, string> | undefined {
  const entries = Object.entries(query)
    .filter(([name]) => name.startsWith("metadata.") && name.length > "metadata.".length)
    .map(([name, value]) => [name.slice("metadata.".length), String([value].flat()[0])] as const);
  return entries.length ? Object.fromEntries(entries) : undefined;
}

export const handler = createHttpHandler("tokens", {
  createToken: async ({ deps, principal, body }) => ({
    status: 201,
    body: await createToken(deps, principal, body),
  }),
  listTokens: async ({ deps, principal, query }) => {
    const page = await listTokens(
      deps,
      principal,
      { ids: query.id, types: query.type, metadata: metadataFilter(query) },
      pageRequest(query),
    );
    return { status: 200, body: envelope(page, query) };
  },
  getToken: async ({ deps, principal, params }) => ({
    status: 200,
    body: await getToken(deps, principal, params.id),
  }),
  patchToken: async ({ deps, principal, params, body }) => ({
    status: 200,
    body: await patchToken(deps, principal, params.id, body),
  }),
  deleteToken: async ({ deps, principal, params }) => {
    await deleteToken(deps, principal, params.id);
    return { status: 204 };
  },
});
