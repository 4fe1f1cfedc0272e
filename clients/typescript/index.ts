/**
 * A typed client for svc-vault: the types are generated from GET /openapi.json (`npm run client:types`), the
 * calls go through openapi-fetch. See README.md beside this file.
 */
import createClient, { type ClientOptions } from "openapi-fetch";
import type { paths } from "./schema.d.ts";

export type { components, operations, paths } from "./schema.d.ts";

export interface VaultClientOptions extends Omit<ClientOptions, "headers" | "querySerializer"> {
  /** The deployment's URL, e.g. http://127.0.0.1:3000. */
  baseUrl: string;
  /** Sent as SVC-API-KEY with every request: a tenant's key, or the root key to create tenants. */
  apiKey?: string;
}

/**
 * A client for one deployment (and one key). Query objects serialize as `form` + `explode`, so the token
 * list's metadata filter `{ metadata: { "metadata.brand": "visa" } }` goes out as `metadata.brand=visa`, as
 * the document says.
 */
export function createVaultClient({ apiKey, ...options }: VaultClientOptions) {
  return createClient<paths>({
    ...options,
    querySerializer: { array: { style: "form", explode: true }, object: { style: "form", explode: true } },
    ...(apiKey ? { headers: { "SVC-API-KEY": apiKey } } : {}),
  });
}

export type VaultClient = ReturnType<typeof createVaultClient>;
