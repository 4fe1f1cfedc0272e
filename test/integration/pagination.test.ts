import { describe, expect, it } from "vitest";
import { client, createTenant } from "#test/support/http.ts";
import { useService } from "#test/support/service.ts";

const svc = useService();

type Page = {
  pagination: {
    total_items: number;
    page_number: number;
    page_size: number;
    total_pages: number;
    next?: string;
  };
  data: { id: string }[];
};

describe("pagination", () => {
  it("pages with defaults 1/20, honours page and size, and offers a cursor", async () => {
    const api = client(svc.url);
    const { managementKey } = await createTenant(api, svc.rootKey);
    for (let i = 0; i < 24; i++)
      await api.post("/applications", { key: managementKey, body: { name: `app ${i}`, type: "public" } });

    const first = await api.get<Page>("/applications", { key: managementKey });
    const second = await api.get<Page>("/applications?page=2&size=20", { key: managementKey });
    const small = await api.get<Page>("/applications?page=3&size=10", { key: managementKey });
    const beyond = await api.get<Page>("/applications?page=9", { key: managementKey });
    const byCursor = await api.get<Page>(`/applications?size=20&start=${first.body.pagination.next}`, {
      key: managementKey,
    });

    expect(first.body.pagination).toEqual({
      total_items: 25,
      page_number: 1,
      page_size: 20,
      total_pages: 2,
      next: expect.any(String),
    });
    expect(first.body.data).toHaveLength(20);
    expect(second.body.data).toHaveLength(5);
    expect(second.body.pagination).toMatchObject({ page_number: 2, total_pages: 2 });
    expect(small.body.data).toHaveLength(5);
    expect(beyond.body.data).toEqual([]);
    expect(byCursor.body.data.map((a) => a.id)).toEqual(second.body.data.map((a) => a.id));
    const all = [...first.body.data, ...second.body.data].map((a) => a.id);
    expect(new Set(all).size).toBe(25);
  });

  it.each([
    ["size=101", "size"],
    ["size=0", "size"],
    ["page=0", "page"],
    ["page=abc", "page"],
    ["size=1.5", "size"],
  ])("refuses %s with 400", async (query, field) => {
    const api = client(svc.url);
    const { managementKey } = await createTenant(api, svc.rootKey);

    const res = await api.get(`/applications?${query}`, { key: managementKey });

    expect(res.status).toBe(400);
    expect(res.body.errors).toHaveProperty([field]);
  });

  it("accepts the maximum size of 100 and refuses an invalid cursor", async () => {
    const api = client(svc.url);
    const { managementKey } = await createTenant(api, svc.rootKey);

    const max = await api.get<Page>("/applications?size=100", { key: managementKey });
    const badCursor = await api.get("/logs?start=%00", { key: managementKey });

    expect(max.status).toBe(200);
    expect(max.body.pagination.page_size).toBe(100);
    expect(badCursor.status).toBe(400);
  });

  it("takes at most a page's worth (100) of a repeated filter: GET /tokens?id=… read every id it was given", async () => {
    const api = client(svc.url);
    const { managementKey } = await createTenant(api, svc.rootKey);
    const reader = await api.post<{ key: string }>("/applications", {
      key: managementKey,
      body: { name: "reader", type: "private", permissions: ["token:read"] },
    });
    const ids = (n: number) => Array.from({ length: n }, (_, i) => `id=t${i}`).join("&");

    const page = await api.get<Page>(`/tokens?${ids(100)}`, { key: reader.body.key });
    const tooMany = await api.get<{ errors: Record<string, string[]> }>(`/tokens?${ids(101)}`, {
      key: reader.body.key,
    });

    expect(page.status).toBe(200);
    expect(tooMany.status).toBe(400);
    expect(JSON.stringify(tooMany.body.errors)).toContain("at most 100 values");
  });
});
