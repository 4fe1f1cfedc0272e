/** A case, resolved against the batch's fixtures into the HTTP request it stands for, and sent. */
import {
  applyMutations,
  type FuzzCase,
  type Hostile,
  type KeyRole,
  renderBody,
  type WriteRoute,
} from "./cases.ts";
import type { Answer, CheckContext } from "./check.ts";
import { type ExampleWorld, exampleFor } from "./examples.ts";
import type { Marker } from "./values.ts";
import { CARDS, type TenantWorld } from "./world.ts";

export interface Fixtures {
  A: TenantWorld;
  B: TenantWorld;
  rootKey: string;
  destinationUrl: string;
  /** SVC_MAX_BODY_BYTES: the limit of every route without its own. */
  defaultBodyLimit: number;
  /** PATCHes of fixture tokens by a private (revealing) key in this batch: in flight, and whether one succeeded. */
  revealerPatches: Map<string, { pending: number; succeeded: boolean }>;
}

export interface PreparedRequest {
  method: string;
  /** Path and query. */
  path: string;
  headers: Record<string, string>;
  body?: Buffer;
  context: CheckContext;
  keyRole: KeyRole;
  /** The fixture token a revealing key PATCHes with this request. */
  revealerPatch?: string;
  /** Fixture tokens a revealing key was PATCHing when this request was sent. */
  sentDuringPatch: Set<string>;
}

function keyOf(role: KeyRole, f: Fixtures): { key?: string; tenant?: "A" | "B" } {
  if (role === "root") return { key: f.rootKey };
  if (role === "none") return {};
  if (role === "garbage") return { key: "key_fuzz_garbage_0000000000000000" };
  const [tenant, kind] = role.split(".") as ["A" | "B", keyof TenantWorld["keys"]];
  return { key: f[tenant].keys[kind], tenant };
}

export function prepare(c: FuzzCase, route: WriteRoute, f: Fixtures): PreparedRequest {
  const { key, tenant } = keyOf(c.key, f);
  const own = tenant === "B" ? f.B : f.A;
  const other = tenant === "B" ? f.A : f.B;
  let crossTenant = false;
  let patched: string | undefined;

  let path = route.path;
  let previous = "";
  for (const segment of route.path.split("/")) {
    const name = /^\{(.+)\}$/.exec(segment)?.[1];
    if (!name) {
      previous = segment;
      continue;
    }
    const choice = c.params[name];
    let value = "";
    if (!choice || choice.kind === "odd") value = choice?.value ?? "";
    else if (name.endsWith("+")) value = choice.kind === "own" ? "fuzz/echo" : "fuzz/other";
    else {
      const world = choice.kind === "own" ? own : other;
      const pool = name === "keyId" ? world.keyIds : (world.ids[previous] ?? []);
      value = pool.length > 0 ? (pool[choice.index % pool.length] as string) : "missing-fixture";
      if (previous === "tokens" && route.method === "PATCH" && c.key.endsWith(".private")) patched = value;
      if (choice.kind === "other" && tenant) crossTenant = true;
    }
    path = path.replace(segment, () => value);
  }

  const headers: Record<string, string> = {};
  if (key) headers["svc-api-key"] = key;
  if (c.idempotencyKey !== undefined) headers["svc-idempotency-key"] = c.idempotencyKey;
  if (route.group === "proxy" && c.proxyKey) {
    const proxyKey =
      c.proxyKey === "own" ? own.proxyKey : c.proxyKey === "other" ? other.proxyKey : "pk_fuzz_garbage";
    if (c.proxyKey === "query") path += `${path.includes("?") ? "&" : "?"}svc-proxy-key=${own.proxyKey}`;
    else if (c.proxyKey !== "none") headers["svc-proxy-key"] = proxyKey;
  }

  const body = bodyOf(c, route, f, own, other);
  if (c.contentType === "default") {
    if (body !== undefined) headers["content-type"] = route.contentType ?? "application/json";
  } else if (c.contentType !== null) headers["content-type"] = c.contentType;

  const bodyText = body === undefined ? "" : body.subarray(0, 256 * 1024).toString("utf8");
  return {
    keyRole: c.key,
    sentDuringPatch: new Set(),
    ...(patched ? { revealerPatch: patched } : {}),
    method: route.method,
    path,
    headers,
    body,
    context: {
      requestText: `${path}\n${Object.values(headers).join("\n")}\n${bodyText}`,
      crossTenant,
      proxy: route.group === "proxy",
      secrets: [],
    },
  };
}

/** Before sending: note a revealing key's PATCH of a fixture token, and which such PATCHes are in flight. */
export function markSent(request: PreparedRequest, f: Fixtures): void {
  for (const [id, patch] of f.revealerPatches) if (patch.pending > 0) request.sentDuringPatch.add(id);
  if (!request.revealerPatch) return;
  const patch = f.revealerPatches.get(request.revealerPatch) ?? { pending: 0, succeeded: false };
  patch.pending += 1;
  f.revealerPatches.set(request.revealerPatch, patch);
}

/**
 * After the answer: the card numbers this caller may not see in full. Every fixture token's, but its own
 * tenant's for the private application (its rules reveal). A token a revealing key has PATCHed successfully
 * (maybe its mask), or was PATCHing meanwhile, is left out: a mask set by an allowed caller may show the data,
 * unless this request sets a mask or expression itself.
 */
export function secretsAfter(request: PreparedRequest, status: number, f: Fixtures): CheckContext["secrets"] {
  const own = request.revealerPatch ? f.revealerPatches.get(request.revealerPatch) : undefined;
  if (own) {
    own.pending -= 1;
    if (status >= 200 && status < 300) own.succeeded = true;
  }
  // A request that itself sets how data is presented is never exempt: that is the attack to catch.
  const presents = /"(mask|fingerprint_expression|search_indexes)"/.test(request.context.requestText);
  const secrets: { value: string; whose: string }[] = [{ value: CARDS.canary, whose: "the canary tenant's" }];
  for (const tenant of ["A", "B"] as const) {
    if (request.keyRole === `${tenant}.private`) continue;
    for (const [id, number] of f[tenant].numbers) {
      const patch = f.revealerPatches.get(id);
      const exempt = (patch && (patch.succeeded || patch.pending > 0)) || request.sentDuringPatch.has(id);
      if (exempt && !presents) continue;
      secrets.push({ value: number, whose: `tenant ${tenant}'s` });
    }
  }
  return secrets;
}

function bodyOf(
  c: FuzzCase,
  route: WriteRoute,
  f: Fixtures,
  own: TenantWorld,
  other: TenantWorld,
): Buffer | undefined {
  const limit = route.maxBodyBytes ?? f.defaultBodyLimit;
  switch (c.body.kind) {
    case "none":
      return undefined;
    case "raw":
      return Buffer.from(c.body.text);
    case "bytes":
      return Buffer.from(c.body.hex, "hex");
    case "value":
      return renderHostile(c.body.value, limit);
    case "example": {
      const world: ExampleWorld = {
        tokenId: own.tokenIds[0] as string,
        otherTokenId: other.tokenIds[0] as string,
        applicationId: own.ids.applications?.[1] as string,
        formulaId: own.ids["reactor-formulas"]?.[0] as string,
        nonce: own.nonce,
        invitationCode: own.invitationCode,
        destinationUrl: f.destinationUrl,
      };
      const example = exampleFor(route)?.(world) ?? {};
      const markers: Marker[] = [];
      return renderBody(applyMutations(example, c.body.mutations, markers), markers, limit);
    }
  }
}

function renderHostile(value: Hostile, limit: number): Buffer {
  if (value.t === "json") return Buffer.from(JSON.stringify(value.v) ?? "null");
  const markers: Marker[] = [];
  // An empty path replaces the root: the whole body is the marker (a 5,000-deep array, a 2 MB string).
  return renderBody(applyMutations({}, [{ op: "set", path: [], value }], markers), markers, limit);
}

/** Sends it; a connection failure or a timeout is an answer too (status 0). */
export async function send(base: string, request: PreparedRequest, timeoutMs: number): Promise<Answer> {
  try {
    const res = await fetch(`${base}${request.path}`, {
      method: request.method,
      headers: request.headers,
      body: request.body,
      signal: AbortSignal.timeout(timeoutMs),
    });
    return {
      status: res.status,
      contentType: res.headers.get("content-type") ?? "",
      text: await res.text(),
    };
  } catch (error) {
    const name = error instanceof Error ? error.name : "Error";
    return { status: 0, contentType: "", text: `${name}: ${error instanceof Error ? error.message : ""}` };
  }
}
