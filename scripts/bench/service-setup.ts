/** Set-up through the public HTTP API: tenants, their applications, and seeded tokens. */
import { call } from "../api-call.ts";
import { cardBody } from "./settings.ts";
import { checkInterrupted } from "./shutdown.ts";

/** A new tenant's management key. */
export const newTenant = (url: string, rootKey: string, name: string) =>
  call<{ management_key: string }>(url, "POST", "/tenants", rootKey, { name }, 201).then(
    (t) => t.management_key,
  );

/** A new application's key. */
export const newApplication = (
  url: string,
  managementKey: string,
  type: "public" | "private",
  permissions: string[],
) =>
  call<{ key: string }>(
    url,
    "POST",
    "/applications",
    managementKey,
    { name: `bench ${permissions.join(" ")}`, type, permissions },
    201,
  ).then((app) => app.key);

/** The bench tenant, a public application (token:create) and a private one whose rule reveals (token:read). */
export async function serviceKeys(url: string, rootKey: string) {
  const management = await newTenant(url, rootKey, "Bench");
  // Reads revealed, as the floor answers them: a mask render would be the caller's choice, not the framework.
  const reveal = { priority: 1, container: "/", transform: "reveal", permissions: ["token:read"] };
  return {
    management,
    create: await newApplication(url, management, "public", ["token:create"]),
    read: await call<{ key: string }>(
      url,
      "POST",
      "/applications",
      management,
      { name: "bench reader", type: "private", rules: [reveal] },
      201,
    ).then((app) => app.key),
  };
}

/** Runs `work(i)` for i in [0, count), `width` at a time, until done or interrupted. */
async function inParallel(count: number, width: number, work: (i: number) => Promise<void>) {
  let next = 0;
  const worker = async () => {
    while (next < count) {
      checkInterrupted();
      await work(next++);
    }
  };
  await Promise.all(Array.from({ length: Math.min(width, count) }, worker));
}

/** Creates `count` card tokens through POST /tokens, 16 at a time, and returns their ids. */
export async function seed(url: string, key: string | undefined, count: number): Promise<string[]> {
  const ids: string[] = [];
  await inParallel(count, 16, async () => {
    ids.push((await call<{ id: string }>(url, "POST", "/tokens", key, cardBody(), 201)).id);
  });
  return ids;
}

/** One token per value, `{ ssn: value }` with a search index on it, through POST /tokenize (100 a call). */
export async function seedSearchable(url: string, key: string, values: string[]): Promise<void> {
  await inParallel(Math.ceil(values.length / 100), 4, async (batch) => {
    const body = values.slice(batch * 100, batch * 100 + 100).map((ssn) => ({
      type: "token",
      data: { ssn },
      search_indexes: ["{{ data.ssn }}"],
    }));
    await call(url, "POST", "/tokenize", key, body, 201);
  });
}
