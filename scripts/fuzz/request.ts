/** A case, resolved against the batch's fixtures into the HTTP request it stands for, and sent. */
import { applyMutations, type FuzzCase, type ParamChoice, type WriteRoute } from "./cases.ts";
import type { Answer, CheckContext } from "./check.ts";
import { exampleFor } from "./examples.ts";
import type { Run, TenantWorld } from "./world.ts";

/** The batch's two tenants; the canary tenant's card numbers, which no case's caller may see. */
export type Fixtures = Run & { A: TenantWorld; B: TenantWorld; canary: string[] };

/** A request ready to send, with what the oracle needs to judge its answer. */
export type PreparedRequest = ReturnType<typeof prepare>;

export function prepare(c: FuzzCase, route: WriteRoute, f: Fixtures) {
  const [first, kind] = c.key.split(".") as ["A" | "B", keyof TenantWorld["keys"] | undefined];
  const others: Record<string, string> = { root: f.rootKey, garbage: "key_fuzz_garbage_0000000" };
  const key = kind ? f[first].keys[kind] : others[first];
  const [own, other] = kind && first === "B" ? [f.B, f.A] : [f.A, f.B];
  // A revealing key PATCHes a token of its own: the mask it sets may rightly show that token's data to others.
  const revealerPatch = kind === "private" && route.method === "PATCH";
  let crossTenant = false;
  const segments = route.path.split("/");
  let path = segments
    .map((segment, i) => {
      const name = /^\{(.+)\}$/.exec(segment)?.[1];
      if (!name) return segment;
      const choice: ParamChoice = c.params[name] ?? { kind: "odd", value: "" };
      if (choice.kind === "odd") return choice.value;
      if (name.endsWith("+")) return choice.kind === "own" ? "fuzz/echo" : "fuzz/other";
      const world = choice.kind === "own" ? own : other;
      const collection = revealerPatch && segments[i - 1] === "tokens" ? "revealerTokens" : segments[i - 1];
      const pool = world.ids[name] ?? world.ids[collection as string] ?? [];
      if (choice.kind === "other" && kind) crossTenant = true;
      return pool[choice.index % pool.length] ?? "missing-fixture";
    })
    .join("/");
  const headers: Record<string, string> = {};
  if (key) headers["svc-api-key"] = key;
  if (c.idempotencyKey !== undefined) headers["svc-idempotency-key"] = c.idempotencyKey;
  const proxyKeys = { own: own.proxyKey, other: other.proxyKey, garbage: "pk_fuzz_garbage", none: "" };
  if (c.proxyKey === "query") path += `${path.includes("?") ? "&" : "?"}svc-proxy-key=${own.proxyKey}`;
  else if (c.proxyKey && c.proxyKey !== "none") headers["svc-proxy-key"] = proxyKeys[c.proxyKey];
  const body = bodyOf(c, route, f, own, other);
  if (c.contentType !== "default") {
    if (c.contentType !== null) headers["content-type"] = c.contentType;
  } else if (body !== undefined) headers["content-type"] = route.contentType ?? "application/json";
  const bodyText = body?.subarray(0, 256 * 1024).toString("utf8") ?? "";
  // The card numbers this caller may not see in full: every fixture token's but its own tenant's for the
  // private application (its rules reveal), and the canary's.
  const secrets = f.canary.map((value) => ({ value, whose: "the canary tenant's" }));
  for (const tenant of ["A", "B"] as const)
    if (c.key !== `${tenant}.private`)
      for (const value of f[tenant].secretNumbers) secrets.push({ value, whose: `tenant ${tenant}'s` });
  const context: CheckContext = {
    requestText: `${path}\n${Object.values(headers).join("\n")}\n${bodyText}`,
    secrets,
    crossTenant,
    proxy: route.group === "proxy",
  };
  return { keyRole: c.key, method: route.method, path, headers, body, context };
}

let uniqueCount = 0;
function bodyOf(c: FuzzCase, route: WriteRoute, f: Fixtures, own: TenantWorld, other: TenantWorld) {
  const { body } = c;
  if (body.kind === "none") return undefined;
  if (body.kind === "raw") return Buffer.from(body.text, "latin1");
  const fixture: Record<string, string | undefined> = {
    ...own.fill,
    otherTokenId: other.fill.tokenId,
    destinationUrl: f.destinationUrl,
    unique: String(++uniqueCount),
    invitationCode: own.invitationCodes[uniqueCount % Math.max(1, own.invitationCodes.length)],
  };
  const fill = (_: string, name: string) => String(fixture[name]);
  const example: unknown = JSON.parse(JSON.stringify(exampleFor(route) ?? {}).replace(/<(\w+)>/g, fill));
  return Buffer.from(JSON.stringify(applyMutations(example, body.mutations)));
}

/** Sends it; a connection failure or a timeout is an answer too (status 0). */
export async function send(base: string, request: PreparedRequest, timeoutMs: number): Promise<Answer> {
  const { method, headers, body } = request;
  try {
    const init = { method, headers, body, signal: AbortSignal.timeout(timeoutMs) };
    const res = await fetch(`${base}${request.path}`, init);
    return { status: res.status, contentType: res.headers.get("content-type") ?? "", text: await res.text() };
  } catch (error) {
    const text = error instanceof Error ? `${error.name}: ${error.message}` : "Error";
    return { status: 0, contentType: "", text };
  }
}
