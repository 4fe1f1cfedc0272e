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
  const application = (type: "public" | "private", permission: string) =>
    call<{ key: string }>(
      url,
      "POST",
      "/applications",
      tenant.management_key,
      { name: `bench ${type}`, type, permissions: [permission] },
      201,
    ).then((app) => app.key);
  return {
    management: tenant.management_key,
    create: await application("public", "token:create"),
    read: await application("private", "token:read"),
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
