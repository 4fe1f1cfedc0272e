/** Set-up through the public HTTP API: a tenant, its applications, and seeded tokens. */
import { call } from "./api.ts";
import { cardBody } from "./settings.ts";

export async function serviceKeys(url: string, rootKey: string) {
  const tenant = await call<{ management_key: string }>(
    url,
    "POST",
    "/tenants",
    rootKey,
    { name: "Bench" },
    201,
  );
  const application = (body: Record<string, unknown>) =>
    call<{ key: string }>(url, "POST", "/applications", tenant.management_key, body, 201).then(
      (app) => app.key,
    );
  return {
    management: tenant.management_key,
    create: await application({ name: "bench public", type: "public", permissions: ["token:create"] }),
    // Reads revealed, as the floor answers them: a mask render would be the caller's choice, not the framework.
    read: await application({
      name: "bench private",
      type: "private",
      rules: [{ priority: 1, container: "/", transform: "reveal", permissions: ["token:read"] }],
    }),
  };
}

/** A private application with token:use: the caller of /proxy. */
export function useApplication(url: string, managementKey: string) {
  return call<{ id: string; key: string }>(
    url,
    "POST",
    "/applications",
    managementKey,
    { name: "bench use", type: "private", permissions: ["token:use"] },
    201,
  );
}

/** Creates `count` card tokens through POST /tokens, 16 at a time, and returns their ids. */
export async function seed(url: string, key: string | undefined, count: number): Promise<string[]> {
  const ids: string[] = [];
  let next = 0;
  const worker = async () => {
    while (next < count) {
      next += 1;
      const token = await call<{ id: string }>(url, "POST", "/tokens", key, cardBody(), 201);
      ids.push(token.id);
    }
  };
  await Promise.all(Array.from({ length: Math.min(16, count) }, worker));
  return ids;
}
