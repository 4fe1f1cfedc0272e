import { describe, expect, it } from "vitest";
import { resultBytesOfText } from "#shared/domain/answer-size.ts";
import { createReactor, reactionResult } from "#test/support/reactors.ts";
import { useService } from "#test/support/service.ts";

const svc = useService();

/** A formula that takes effect (a token created per run) and then answers `size` characters. */
const code = (size: number) => `
module.exports = async (req) => {
  await req.svc.tokens.create({ type: "token", data: "one run" });
  return { raw: { big: "x".repeat(${size}) } };
};`;

async function setup(size: number) {
  return createReactor(svc, {
    formula: { name: "large answer", code: code(size) },
    permissions: ["token:create", "token:use", "token:read"],
  });
}

const runsOf = async ({ api, app }: Awaited<ReturnType<typeof setup>>) =>
  (await api.get<{ data: unknown[] }>("/tokens?size=100", { key: app.key })).body.data.length;

/** A formula that takes no recorded effect (no svc write): what it does outside the vault counts all the same. */
const unrecorded = `module.exports = async () => ({ raw: { run: Math.random(), big: "x".repeat(400000) } });`;

describe("attack: a reaction answering more than a record keeps", () => {
  it("react with an idempotency key and no recorded effect: a retry answers 409, never runs the code again", async () => {
    const { api, app, reactorId } = await createReactor(svc, {
      formula: { name: "unrecorded", code: unrecorded },
      permissions: ["token:use"],
    });
    const headers = { "svc-idempotency-key": "large-answer-unrecorded" };
    const send = () =>
      api.post(`/reactors/${reactorId}/react`, { key: app.key, body: { args: {} }, headers });
    expect((await send()).status).toBe(200);
    // Before this: the key was released as after a failure, and the retry ran the code again (200, another run).
    expect((await send()).status).toBe(409);
  });

  it("react-async: ran once, its result a kept failure (before: run 5 times, then 404 for good)", async () => {
    const reactor = await setup(400_000);
    const { api, app, reactorId } = reactor;
    const accepted = await api.post<{ asyncReactorRequestId: string }>(`/reactors/${reactorId}/react-async`, {
      key: app.key,
      body: { args: {} },
    });
    expect(accepted.status).toBe(202);
    const result = await reactionResult(api, app.key, reactorId, accepted.body.asyncReactorRequestId);
    // The run's outcome, as a failed reaction answers it.
    expect(result.status).toBe(500);
    expect(JSON.stringify(result.body)).toContain("too large to keep");
    expect(await runsOf(reactor)).toBe(1);
  });

  it("react with an idempotency key: answered in full, and a retry replays, never runs again (before: 500)", async () => {
    const reactor = await setup(400_000);
    const { api, app, reactorId } = reactor;
    const headers = { "svc-idempotency-key": "large-answer-1" };
    const first = await api.post<{ raw?: { big: string } }>(`/reactors/${reactorId}/react`, {
      key: app.key,
      body: { args: {} },
      headers,
    });
    expect(first.status).toBe(200);
    expect(first.body.raw?.big.length).toBe(400_000);
    const retry = await api.post(`/reactors/${reactorId}/react`, {
      key: app.key,
      body: { args: {} },
      headers,
    });
    expect(retry.status).toBe(409);
    expect(await runsOf(reactor)).toBe(1);
  });

  it("a thrown error echoing megabytes into its errors is a 500 answer-too-large problem, not a result past 6 MB (round 9)", async () => {
    // Messages of `"`: 2 bytes each in the runner's result, 4 once escaped again in the function's (3.2 MB → 6.4 MB).
    const thrower = `module.exports = async () => {
      const error = new Error("invalid card");
      error.status = 400;
      error.body = { errors: { card: Array.from({ length: 1600 }, () => '"'.repeat(1000)) } };
      throw error;
    };`;
    const { api, app, reactorId } = await createReactor(svc, {
      formula: { name: "big error", code: thrower },
      permissions: ["token:use"],
    });
    const res = await api.post<{ type: string }>(`/reactors/${reactorId}/react`, {
      key: app.key,
      body: { args: {} },
    });
    expect(res.status).toBe(500);
    expect(res.headers.get("content-type")).toBe("application/problem+json");
    expect(res.body.type).toContain("answer-too-large");
    expect(resultBytesOfText(JSON.stringify(res.body))).toBeLessThan(4096);
  });

  // 1,000 quotes rendered 120 times: 120,000 characters each (within the 128 Ki mask output). Before: 500
  // answer-too-large with the tokens stored, and again on each retry (review rounds 11 and 12).
  it.each([
    { case: "20 masked tokens (9.6 MB: round 11)", tokens: 20, raw: "" },
    // 11 tokens (5.3 MB) pass the batch's own check; with 1.5 MB of raw beside them the reaction's answer does not.
    {
      case: "11 masked tokens beside a raw of 1.5 MB (round 12)",
      tokens: 11,
      raw: ', raw: { big: "x".repeat(1500000) }',
    },
  ])(
    "writes a tokenize block as POST /tokenize's batch: an answer no result carries is refused before anything is stored ($case)",
    async ({ tokens, raw }) => {
      const code = `module.exports = async () => {
      const request = { type: "token", data: '"'.repeat(1000), mask: Array.from({ length: 120 }, () => "{{data}}") };
      return { tokenize: Array.from({ length: ${tokens} }, () => request)${raw} };
    };`;
      const { api, app, reactorId } = await createReactor(svc, {
        formula: { name: "batch answer size", code },
        permissions: ["token:create", "token:use", "token:read"],
      });
      const stored = async () =>
        (await api.get<{ pagination: { total_items: number } }>("/tokens?size=1", { key: app.key })).body
          .pagination.total_items;
      const first = await api.post(`/reactors/${reactorId}/react`, { key: app.key, body: { args: {} } });
      expect({ status: first.status, stored: await stored() }).toEqual({ status: 400, stored: 0 });
    },
  );

  it("takes no more tokens from one block than POST /tokenize takes per call (250): 600 are refused, none stored", async () => {
    const many = `module.exports = async () => ({
      tokenize: Array.from({ length: 600 }, (_, i) => ({ type: "token", data: "v" + i })),
    });`;
    const { api, app, reactorId } = await createReactor(svc, {
      formula: { name: "many tokens", code: many },
      permissions: ["token:create", "token:use", "token:read"],
    });
    const res = await api.post<{ detail: string }>(`/reactors/${reactorId}/react`, {
      key: app.key,
      body: { args: {} },
    });
    const stored = (
      await api.get<{ pagination: { total_items: number } }>("/tokens?size=1", { key: app.key })
    ).body.pagination.total_items;
    // Before: 600 creates at once, a 503 with part of them stored (181, then 122).
    expect({ status: res.status, stored }).toEqual({ status: 400, stored: 0 });
    expect(res.body.detail).toContain("At most 250 token requests");
  });

  it("review r12: a throttled read entry for the caller after a tokenize block's commit: no 5xx for stored tokens", async () => {
    const code = `module.exports = async () => ({ tokenize: { a: { type: "token", data: "created by the run" } } });`;
    const { api, app, reactorId } = await createReactor(svc, {
      formula: { name: "one token", code },
      permissions: [],
      rules: [
        {
          priority: 1,
          container: "/",
          transform: "reveal",
          permissions: ["token:create", "token:use", "token:read"],
        },
      ],
    });
    // DynamoDB throttles the caller's read entry (written by react.ts after tokenizeBatch has committed) once,
    // past the SDK's retries, as POST /tokenize's own read entries were until they moved before its commit.
    const log = svc.service.deps.auditLog as unknown as {
      append: (entries: { message?: string }[]) => Promise<void>;
    };
    const append = log.append.bind(log);
    log.append = async (entries) => {
      if (entries.some((e) => String(e.message).includes("in the answer of reactor"))) {
        log.append = append;
        throw Object.assign(new Error("throttled"), { name: "ThrottlingException" });
      }
      return append(entries);
    };
    const stored = async () =>
      (await api.get<{ pagination: { total_items: number } }>("/tokens?size=1", { key: app.key })).body
        .pagination.total_items;
    const first = await api.post(`/reactors/${reactorId}/react`, { key: app.key, body: { args: {} } });
    // Found: 503 (a retry is what it asks for) with the token stored; each retry stores one more. A failure answered
    // for the reaction must leave nothing stored, as POST /tokenize's read entries, written before its commit, do.
    expect({ status: first.status, stored: await stored() }).toEqual(
      first.status >= 500 ? { status: first.status, stored: 0 } : { status: 200, stored: 1 },
    );
  });
});
