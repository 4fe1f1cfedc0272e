import { execFile } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, describe, expect, it } from "vitest";
import { client } from "#test/support/http.ts";
import { useService } from "#test/support/service.ts";

const svc = useService();
const dir = mkdtempSync(join(tmpdir(), "svc-openapi-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const REDOCLY = new URL("../../node_modules/.bin/redocly", import.meta.url).pathname;

interface LintReport {
  totals: { errors: number; warnings: number };
  problems: { ruleId: string; severity: string; message: string; location?: { pointer?: string }[] }[];
}

type Operation = {
  operationId: string;
  security?: Record<string, string[]>[];
  parameters?: { name: string; in: string; style?: string; explode?: boolean; schema?: unknown }[];
};
interface Document {
  servers?: { url: string }[];
  paths: Record<string, Record<string, Operation>>;
  components: { securitySchemes: Record<string, { type: string; in: string; name: string }> };
}

/** The document the running service serves, written where the lint can read it. */
async function servedDocument(): Promise<{ path: string; document: Document }> {
  const res = await client(svc.url).get<Document>("/openapi.json");
  expect(res.status).toBe(200);
  const path = join(dir, "openapi.json");
  writeFileSync(path, JSON.stringify(res.body));
  return { path, document: res.body };
}

const operations = (document: Document) =>
  Object.entries(document.paths).flatMap(([path, item]) =>
    Object.entries(item).map(([method, operation]) => ({ path, method, operation })),
  );

describe("GET /openapi.json", () => {
  it("passes Redocly's recommended rules with no error", async () => {
    const { path } = await servedDocument();

    // Redocly exits non-zero when there are errors; the report says which, so read it either way.
    const { stdout } = await promisify(execFile)(
      process.execPath,
      [REDOCLY, "lint", path, "--extends=recommended", "--format=json"],
      { env: { ...process.env, REDOCLY_TELEMETRY: "off", REDOCLY_SUPPRESS_UPDATE_NOTICE: "true" } },
    ).catch((error: { stdout?: string }) => ({ stdout: error.stdout ?? "" }));
    const report = JSON.parse(stdout.slice(stdout.indexOf("{"))) as LintReport;

    const errors = report.problems
      .filter((p) => p.severity === "error")
      .map((p) => `${p.ruleId} ${p.location?.[0]?.pointer ?? ""}: ${p.message}`);
    expect(errors).toEqual([]);
    expect(report.totals.errors).toBe(0);
  });

  it("describes the proxy's path as a path parameter, and its key as a scheme beside SVC-API-KEY", async () => {
    const { document } = await servedDocument();

    expect(Object.keys(document.paths).filter((p) => p.includes("+"))).toEqual([]);
    const invoke = document.paths["/proxy/{proxy}"]?.post;
    expect(invoke?.parameters).toEqual(
      expect.arrayContaining([expect.objectContaining({ name: "proxy", in: "path", required: true })]),
    );
    const schemes = document.components.securitySchemes;
    expect(schemes.ProxyKey).toMatchObject({ type: "apiKey", in: "header", name: "SVC-PROXY-KEY" });
    expect(schemes.ApiKey).toMatchObject({ type: "apiKey", in: "header", name: "SVC-API-KEY" });
    expect(invoke?.security).toEqual(
      expect.arrayContaining([{ ProxyKey: [] }, { ProxyKey: [], ApiKey: [] }]),
    );
    expect(document.servers?.length).toBeGreaterThan(0);
  });

  it("marks every operation's security: public routes with an empty list", async () => {
    const { document } = await servedDocument();

    expect(operations(document).filter(({ operation }) => operation.security === undefined)).toEqual([]);
    expect(document.paths["/healthz"]?.get?.security).toEqual([]);
    expect(document.paths["/tenants"]?.post?.security).toEqual([{ RootKey: [] }]);
  });

  it("lists SVC-IDEMPOTENCY-KEY on writes, SVC-TRANSACTION-ID where a write joins, and the metadata filter", async () => {
    const { document } = await servedDocument();
    const headerNames = (operation: Operation | undefined) =>
      (operation?.parameters ?? []).filter((p) => p.in === "header").map((p) => p.name);

    expect(headerNames(document.paths["/applications"]?.post)).toEqual(["SVC-IDEMPOTENCY-KEY"]);
    expect(headerNames(document.paths["/tokens"]?.post)).toEqual([
      "SVC-IDEMPOTENCY-KEY",
      "SVC-TRANSACTION-ID",
    ]);
    expect(headerNames(document.paths["/tokens/{id}"]?.delete)).toEqual(["SVC-TRANSACTION-ID"]);
    expect(headerNames(document.paths["/proxy"]?.post)).toEqual([]);
    expect(document.paths["/tokens"]?.get?.parameters).toContainEqual(
      expect.objectContaining({ name: "metadata", in: "query", style: "form", explode: true }),
    );
  });
});
