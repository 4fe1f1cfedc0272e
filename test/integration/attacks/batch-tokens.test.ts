import { describe, expect, it } from "vitest";
import { bodyText } from "#test/support/http.ts";
import { useService } from "#test/support/service.ts";
import { appKey, revealEverything, type TokenBody, tenantWithOwner, VISA } from "#test/support/tokens.ts";

const svc = useService();

interface CursorPage {
  pagination: { page_size: number; next?: string };
  data: TokenBody[];
}
interface LogPage {
  data: { entity_id: string; operation: string }[];
}

const secret = (value: string, containers = ["/secret/"]) => ({ type: "token", data: value, containers });

async function tenant() {
  const { api, tenant, owner } = await tenantWithOwner(svc);
  const reader = await appKey(api, tenant.managementKey, { type: "private", rules: revealEverything });
  return { api, ...tenant, owner, reader };
}

describe("attack: reaching another tenant's tokens through the batch routes", () => {
  it("detokenize, tokenize and /v2/tokens see only the caller's own tenant", async () => {
    const a = await tenant();
    const b = await tenant();
    const [victim] = (
      await a.api.post<TokenBody[]>("/tokenize", { key: a.owner, body: [secret("a-secret")] })
    ).body as [TokenBody];

    // B names A's token: unknown, exactly as an id that exists nowhere.
    const named = await b.api.post<{ detail: string }>("/detokenize", {
      key: b.reader,
      body: { x: `{{ ${victim.id} }}` },
    });
    expect(named.status).toBe(400);
    expect(bodyText(named.body)).not.toContain("a-secret");
    // B's tokenize with A's id creates B's own token; A's is untouched.
    const same = await b.api.post<TokenBody[]>("/tokenize", {
      key: b.owner,
      body: [{ ...secret("b-value"), id: victim.id }],
    });
    expect(same.status).toBe(201);
    const aStill = await a.api.get<TokenBody>(`/tokens/${victim.id}`, { key: a.reader });
    expect(aStill.body.data).toBe("a-secret");
    // B's listing holds B's token only.
    const listed = await b.api.get<CursorPage>("/v2/tokens", { key: b.reader });
    expect(listed.body.data.map((t) => t.data)).toEqual(["b-value"]);
  });
});

describe("attack: reusing a listing cursor elsewhere", () => {
  it("a cursor works only for the tenant and the query that issued it", async () => {
    const a = await tenant();
    const b = await tenant();
    const body = Array.from({ length: 5 }, (_, i) => secret(`v${i}`));
    await a.api.post("/tokenize", { key: a.owner, body });
    await b.api.post("/tokenize", { key: b.owner, body });
    const first = await a.api.get<CursorPage>("/v2/tokens?size=2&type=token", { key: a.reader });
    const cursor = first.body.pagination.next as string;
    expect(cursor).toBeTruthy();
    // Nothing of the position shows through (it is sealed, not encoded).
    expect(cursor).not.toContain(first.body.data[1]?.id as string);
    const decoded = cursor.split(".").map((part) => Buffer.from(part, "base64url").toString("latin1"));
    const last = first.body.data[1] as TokenBody;
    for (const part of decoded) {
      expect(part).not.toContain(last.id);
      expect(part).not.toContain(last.created_at.slice(0, 16));
    }

    const same = await a.api.get<CursorPage>(`/v2/tokens?size=2&type=token&start=${cursor}`, {
      key: a.reader,
    });
    expect(same.status).toBe(200);
    expect(same.body.data).toHaveLength(2);

    const otherTenant = await b.api.get(`/v2/tokens?size=2&type=token&start=${cursor}`, { key: b.reader });
    const otherQuery = await a.api.get(`/v2/tokens?size=2&type=card&start=${cursor}`, { key: a.reader });
    const otherContainer = await a.api.get(
      `/v2/tokens?size=2&type=token&container=/secret/&start=${cursor}`,
      {
        key: a.reader,
      },
    );
    const tampered = `${cursor.slice(0, -2)}${cursor.endsWith("AA") ? "BB" : "AA"}`;
    const forged = await a.api.get(`/v2/tokens?type=token&start=${tampered}`, { key: a.reader });
    const plain = await a.api.get(
      `/v2/tokens?type=token&start=${Buffer.from("9999-12-31T00:00:00.000Z#x").toString("base64url")}`,
      { key: a.reader },
    );
    const reserved = await a.api.get(`/v2/tokens?metadata=${encodeURIComponent('{"__proto__":"x"}')}`, {
      key: a.reader,
    });
    for (const res of [otherTenant, otherQuery, otherContainer, forged, plain, reserved]) {
      expect(res.status).toBe(400);
      expect(res.headers.get("content-type")).toContain("application/problem+json");
    }
  });
});

describe("attack: batch routes past the caller's rules", () => {
  async function ruled() {
    const t = await tenant();
    // Reads /open/ revealed, /masked/ masked, nothing else; creates in /open/ only.
    const limited = await appKey(t.api, t.managementKey, {
      type: "private",
      rules: [
        {
          description: "open",
          priority: 1,
          container: "/open/",
          transform: "reveal",
          permissions: ["token:read", "token:create"],
        },
        {
          description: "masked",
          priority: 2,
          container: "/masked/",
          transform: "mask",
          permissions: ["token:read"],
        },
      ],
    });
    const created = await t.api.post<TokenBody[]>("/tokenize", {
      key: t.owner,
      body: [
        secret("hidden"),
        { type: "social_security_number", data: "123-45-6789", containers: ["/masked/"] },
        secret("visible", ["/open/"]),
      ],
    });
    expect(created.status).toBe(201);
    const [hidden, masked, visible] = created.body as [TokenBody, TokenBody, TokenBody];
    return { ...t, limited, hidden, masked, visible };
  }

  it("detokenize refuses a token outside token:read (403, no data, no read entry) and masks where the rule masks", async () => {
    const { api, limited, hidden, masked, visible, managementKey } = await ruled();
    const refused = await api.post<{ detail: string }>("/detokenize", {
      key: limited,
      body: { ok: `{{ ${visible.id} }}`, no: `{{ ${hidden.id} }}` },
    });
    expect(refused.status).toBe(403);
    expect(refused.headers.get("content-type")).toContain("application/problem+json");
    expect(refused.body.detail).toContain("token:read");
    expect(bodyText(refused.body)).not.toContain("visible");
    expect(bodyText(refused.body)).not.toContain("hidden");
    const logs = await api.get<LogPage>(`/logs?entity_id=${visible.id}`, { key: managementKey });
    expect(logs.body.data.filter((l) => l.operation === "read")).toHaveLength(0);

    const shown = await api.post("/detokenize", {
      key: limited,
      body: [`{{ ${visible.id} }}`, `{{ ${masked.id} }}`],
    });
    expect(shown.status).toBe(200);
    expect(shown.body).toEqual(["visible", "XXXXXXX6789"]);
  });

  it("/v2/tokens lists only what token:read reaches, and its fingerprint filter is no oracle for masked values", async () => {
    const { api, limited, masked, visible } = await ruled();
    const listed = await api.get<CursorPage>("/v2/tokens", { key: limited });
    expect(listed.body.data.map((t) => t.id).sort()).toEqual([masked.id, visible.id].sort());

    // The attacker tokenizes a guess where it reveals, learns the guess's fingerprint, then filters by it.
    const guess = await api.post<TokenBody[]>("/tokenize", {
      key: limited,
      body: [{ type: "social_security_number", data: "123-45-6789", containers: ["/open/"] }],
    });
    expect(guess.status).toBe(201);
    const fingerprint = guess.body[0]?.fingerprint as string;
    expect(fingerprint).toBeTruthy();
    const matched = await api.get<CursorPage>(`/v2/tokens?fingerprint=${encodeURIComponent(fingerprint)}`, {
      key: limited,
    });
    expect(matched.status).toBe(200);
    // Only its own revealed guess: the masked token with the same value does not confirm the guess.
    expect(matched.body.data.map((t) => t.id)).toEqual([guess.body[0]?.id]);
  });

  it("deduplication in a batch hands back no token the caller may not read, and stores nothing then", async () => {
    const { api, owner, limited, reader } = await ruled();
    await api.post("/tokens", { key: owner, body: { ...secret("guessed"), deduplicate_token: true } });
    const before = await api.get<CursorPage>("/v2/tokens?size=100", { key: reader });
    for (const size of [2, 120]) {
      const body = [
        ...Array.from({ length: size - 1 }, (_, i) => secret(`filler ${i}`, ["/open/"])),
        { ...secret("guessed", ["/open/"]), deduplicate_token: true },
      ];
      const res = await api.post<{ detail: string }>("/tokenize", { key: limited, body });
      expect(res.status).toBe(409);
      expect(bodyText(res.body)).not.toContain("guessed");
      const after = await api.get<CursorPage>("/v2/tokens?size=100", { key: reader });
      expect(after.body.data).toHaveLength(before.body.data.length);
    }
  });

  it("tokenize cannot slip one write into a container it may not create in", async () => {
    const { api, limited, reader } = await ruled();
    const before = await api.get<CursorPage>("/v2/tokens?size=100", { key: reader });
    const smuggled = await api.post("/tokenize", {
      key: limited,
      body: { fine: secret("ok", ["/open/"]), sneaky: secret("planted", ["/secret/"]) },
    });
    expect(smuggled.status).toBe(403);
    const after = await api.get<CursorPage>("/v2/tokens?size=100", { key: reader });
    expect(after.body.data).toHaveLength(before.body.data.length);
    expect(bodyText(after.body)).not.toContain("planted");
  });
});

describe("attack: a batch that fails half-way", () => {
  it("leaves nothing readable: not by id, not in a list, not by detokenize", async () => {
    const { api, owner, reader } = await tenant();
    await api.post("/tokens", { key: owner, body: { type: "token", data: "x", id: "collide" } });
    const ids = Array.from({ length: 120 }, (_, i) => `batch-${i}`);
    const batch = [
      ...ids.map((id) => ({
        type: "card",
        id,
        data: { number: VISA, expiration_month: 1, expiration_year: 2040 },
      })),
      { type: "token", id: "collide", data: "y" },
    ];
    const res = await api.post("/tokenize", { key: owner, body: batch });
    expect(res.status).toBe(409);
    for (const id of [ids[0], ids[119]])
      expect((await api.get(`/tokens/${id}`, { key: reader })).status).toBe(404);
    const listed = await api.get<CursorPage>("/v2/tokens?size=100", { key: reader });
    expect(listed.body.data.map((t) => t.id)).toEqual(["collide"]);
    const used = await api.post("/detokenize", { key: reader, body: `{{ ${ids[5]} }}` });
    expect(used.status).toBe(400);
    // The ids are free again: the same batch without the collision goes through.
    const retried = await api.post<TokenBody[]>("/tokenize", { key: owner, body: batch.slice(0, 120) });
    expect(retried.status).toBe(201);
  });
});
