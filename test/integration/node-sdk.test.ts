import { type BasisTheory, BasisTheoryClient } from "@basis-theory/node-sdk";
import { describe, expect, it } from "vitest";
import { useService } from "#test/support/service.ts";
import { appKey, revealEverything, tenantWithOwner, VISA } from "#test/support/tokens.ts";

const svc = useService();

type Fetcher = NonNullable<ConstructorParameters<typeof BasisTheoryClient>[0]>["fetcher"];
type FetcherArgs = Parameters<NonNullable<Fetcher>>[0];

/**
 * The hosted vault's SDK, pointed at this service with nothing changed but the header prefix: its `BT-*` request
 * headers go out as `SVC-*`, and `SVC-*` response headers come back as `BT-*`. Paths and bodies are its own.
 */
const renamingFetcher: Fetcher = async <R>(args: FetcherArgs) => {
  const url = new URL(args.url);
  for (const [name, value] of Object.entries(args.queryParameters ?? {}))
    for (const item of [value].flat())
      if (item !== undefined && item !== null) url.searchParams.append(name, String(item));
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(args.headers ?? {})) {
    const resolved =
      typeof value === "function" ? await value({ endpointMetadata: args.endpointMetadata ?? {} }) : value;
    if (resolved !== undefined && resolved !== null)
      headers[name.replace(/^BT-/i, "SVC-")] = String(resolved);
  }
  const hasBody = args.body !== undefined;
  if (hasBody) headers["content-type"] = args.contentType ?? "application/json";
  const res = await fetch(url, {
    method: args.method,
    headers,
    ...(hasBody ? { body: JSON.stringify(args.body) } : {}),
  });
  const responseHeaders = new Headers();
  res.headers.forEach((value, name) => {
    responseHeaders.set(name.replace(/^svc-/i, "bt-"), value);
  });
  const rawResponse = {
    headers: responseHeaders,
    redirected: res.redirected,
    status: res.status,
    statusText: res.statusText,
    type: res.type,
    url: res.url,
  };
  const text = await res.text();
  const body: unknown = text ? JSON.parse(text) : undefined;
  if (res.ok) return { ok: true, body: body as R, rawResponse };
  return { ok: false, error: { reason: "status-code", statusCode: res.status, body }, rawResponse };
};

const sdk = (apiKey: string) =>
  new BasisTheoryClient({ apiKey, baseUrl: svc.url, fetcher: renamingFetcher, maxRetries: 0 });

describe("the hosted vault's Node SDK, headers renamed alone", () => {
  it("tokenize (idempotent), detokenize and listV2 work as against the hosted vault", async () => {
    const { api, tenant, owner } = await tenantWithOwner(svc);
    const reader = await appKey(api, tenant.managementKey, { type: "private", rules: revealEverything });
    const writer = sdk(owner);
    const request = {
      card: { type: "card", data: { number: VISA, expiration_month: 12, expiration_year: 2030 } },
      notes: Array.from({ length: 30 }, (_, i) => ({
        type: "token",
        data: `note ${i}`,
        metadata: { batch: "sdk" },
      })),
    };
    const created = (await writer.tokens.tokenize(request, { idempotencyKey: "sdk-batch-1" })) as {
      card: BasisTheory.Token;
      notes: BasisTheory.Token[];
    };
    expect(created.card.type).toBe("card");
    expect(created.notes).toHaveLength(30);
    const replayed = (await writer.tokens.tokenize(request, {
      idempotencyKey: "sdk-batch-1",
    })) as typeof created;
    expect(replayed.notes.map((t) => t.id)).toEqual(created.notes.map((t) => t.id));

    const readerSdk = sdk(reader);
    const detokenized = await readerSdk.tokens.detokenize({
      number: `{{ ${created.card.id} | json: '$.number' }}`,
      note: `{{ token: ${created.notes[3]?.id} }}`,
    });
    expect(detokenized).toEqual({ number: VISA, note: "note 3" });

    // Every page through the SDK's own pager (it sends `start` from pagination.next).
    const seen: string[] = [];
    const pages = await readerSdk.tokens.listV2({ size: 7, type: "token", metadata: { batch: "sdk" } });
    for await (const token of pages) seen.push(token.id as string);
    expect(seen.sort()).toEqual(created.notes.map((t) => t.id as string).sort());

    const invalid = await sdk(owner)
      .tokens.listV2({ start: "not-a-cursor" })
      .then(
        () => undefined,
        (error: unknown) => error as { statusCode?: number },
      );
    expect(invalid?.statusCode).toBe(400);
  });

  it("searchV2 pages through a search on blind indexes", async () => {
    const { api, tenant, owner } = await tenantWithOwner(svc);
    const searcher = await appKey(api, tenant.managementKey, { type: "private", rules: revealEverything });
    const notes = Array.from({ length: 5 }, (_, i) => ({
      type: "token",
      data: { ssn: `123-45-67${i}9` },
      search_indexes: ["{{ data.ssn | slice: -4, 4 }}"],
    }));
    const created = (await sdk(owner).tokens.tokenize(notes)) as BasisTheory.Token[];
    const seen: string[] = [];
    const pages = await sdk(searcher).tokens.searchV2({ query: "data:6709", size: 2 });
    for await (const token of pages) seen.push(token.id as string);
    expect(seen).toEqual([created[0]?.id]);
    const all: string[] = [];
    for await (const token of await sdk(searcher).tokens.searchV2({ query: "type:token", size: 2 }))
      all.push(token.id as string);
    expect(all.sort()).toEqual(created.map((t) => t.id as string).sort());
  });
});
