import { describe, expect, it } from "vitest";
import { client, createTenant } from "#test/support/http.ts";
import { useService } from "#test/support/service.ts";
import { ALL_TOKEN_PERMISSIONS, appKey, type TokenPage, VISA } from "#test/support/tokens.ts";

/**
 * Attack: a session (or a key) learns how many tokens the tenant holds where it may not read, from the
 * `total_items` of `GET /tokens`. Before the fix a session's count used its own rules alone, so a session
 * authorized on "/" by an application that reads only /pci/ counted every token of the tenant; and a rule with
 * two container conditions counted by the last one only. Every count now holds exactly what the list shows.
 */
const svc = useService();

type Created = { session_key: string; nonce: string };

async function setup(application: { permissions?: string[]; rules?: unknown[] }) {
  const api = client(svc.url);
  const tenant = await createTenant(api, svc.rootKey);
  const writer = await appKey(api, tenant.managementKey, {
    type: "private",
    permissions: ALL_TOKEN_PERMISSIONS,
  });
  const pub = await appKey(api, tenant.managementKey, { type: "public", permissions: ["token:create"] });
  const authorizer = await appKey(api, tenant.managementKey, { type: "private", ...application });
  // Two cards (/pci/high/) and three general tokens (/general/high/).
  for (const number of [VISA, "5555555555554444"]) {
    const res = await api.post("/tokens", { key: writer, body: { type: "card_number", data: number } });
    expect(res.status).toBe(201);
  }
  for (const data of ["a", "b", "c"]) {
    const res = await api.post("/tokens", { key: writer, body: { type: "token", data } });
    expect(res.status).toBe(201);
  }
  /** A session of the public application, authorized by `authorizer` with `rules`. */
  const session = async (rules: unknown[]) => {
    const created = await api.post<Created>("/sessions", { key: pub });
    expect(created.status).toBe(201);
    const authorized = await api.post("/sessions/authorize", {
      key: authorizer,
      body: { nonce: created.body.nonce, rules },
    });
    expect(authorized.status).toBe(200);
    return created.body.session_key;
  };
  const list = async (key: string, query = "") => {
    const res = await api.get<TokenPage>(`/tokens${query}`, { key });
    expect(res.status).toBe(200);
    return {
      total: res.body.pagination.total_items,
      pages: res.body.pagination.total_pages,
      shown: res.body.data.length,
    };
  };
  return { api, authorizer, session, list };
}

const readAll = [{ priority: 1, container: "/", transform: "reveal", permissions: ["token:read"] }];

describe("attack: counting tokens the caller may not read", () => {
  it("a session counts only what its authorizing application may read too", async () => {
    const { authorizer, session, list } = await setup({
      rules: [{ priority: 1, container: "/pci/", transform: "mask", permissions: ["token:read"] }],
    });
    const key = await session(readAll);

    const all = await list(key);
    const paged = await list(key, "?size=1");

    // The application reads /pci/ only: the session's "/" rule adds nothing, to the list or its count.
    expect(all).toEqual({ total: 2, pages: 1, shown: 2 });
    expect(paged).toEqual({ total: 2, pages: 2, shown: 1 });
    expect(await list(authorizer)).toEqual(all);
  });

  it("a session with two container conditions counts tokens matching both, not the last one", async () => {
    const { session, list } = await setup({ permissions: ["token:read"] });
    const key = await session([
      {
        priority: 1,
        conditions: [
          { attribute: "container", operator: "starts_with", value: "/pci/" },
          { attribute: "container", operator: "starts_with", value: "/general/" },
        ],
        transform: "reveal",
        permissions: ["token:read"],
      },
    ]);

    // No container starts with both: nothing is readable, and nothing is counted.
    expect(await list(key)).toEqual({ total: 0, pages: 0, shown: 0 });
  });

  it("a count filtered by type or metadata follows the same rule", async () => {
    const { session, list } = await setup({
      rules: [{ priority: 1, container: "/general/", transform: "mask", permissions: ["token:read"] }],
    });
    const key = await session(readAll);

    expect(await list(key, "?type=card_number")).toEqual({ total: 0, pages: 0, shown: 0 });
    expect(await list(key, "?type=token")).toEqual({ total: 3, pages: 1, shown: 3 });
  });
});
