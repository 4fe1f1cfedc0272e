/**
 * The packed repository used as a library: `npm pack` (which builds dist/cdk through `prepack`), the tarball
 * unpacked into a separate app's node_modules as `npm install` would, and a plain JavaScript CDK app that puts
 * TokenizationVault into two stages of one account and synthesizes them.
 *
 * The app's other packages are symlinks into this repository's node_modules rather than an `npm install`: an
 * offline install would copy some 400 MB (aws-cdk-lib alone is 160 MB) from the npm cache on every run, and what is
 * tested is the tarball (its files, `exports`, built JavaScript and declarations), not npm. Bundling is skipped
 * (`aws:cdk:bundling-stacks`), as the functions' code is stack.test.ts's subject; NodejsFunction still finds each
 * handler and the lock file in the installed package, and one handler is bundled from there with esbuild.
 */
import { execFile } from "node:child_process";
import {
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { build } from "esbuild";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { REPO_ROOT } from "#lib/bundling.ts";

const run = promisify(execFile);

interface StackSummary {
  stage: string;
  stack: string;
  aliases: string[];
  apiNames: string[];
  rootKeyParameters: string[];
  namespaces: string[];
  runnerPrefixes: string[];
  tableNames: string[];
  alarms: number;
  dashboards: number;
  functionCodePaths: string[];
  aspects: number;
}

let dir: string;
let tarball: string;
let installed: string;
let summary: { stacks: StackSummary[]; validationPlugins: number };

// What the separate app does: nothing of this repository but the package `svc-vault/cdk`.
const APP = `
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { App, Aspects, Stack, Stage } from "aws-cdk-lib";
import { Queue } from "aws-cdk-lib/aws-sqs";
import { TokenizationVault } from "svc-vault/cdk";

const app = new App({ outdir: process.env.OUT, context: { "aws:cdk:bundling-stacks": [] } });
const env = { account: "111111111111", region: "eu-west-1" };
const stacks = [];
for (const stageName of ["Staging", "Production"]) {
  const stage = new Stage(app, stageName, { env });
  const stack = new Stack(stage, "Payments");
  new TokenizationVault(stack, "Vault", { emailSender: "vault@example.com" });
  // cdk-nag would refuse this queue (no TLS-only policy, no DLQ): the construct must not force its checks.
  new Queue(stack, "UnrelatedQueue");
  stacks.push([stage, stack]);
}
const assembly = app.synth();
const of = (template, type) => Object.values(template.Resources).filter((r) => r.Type === type);
const variables = (template, name) => [...new Set(of(template, "AWS::Lambda::Function")
  .map((f) => f.Properties.Environment?.Variables?.[name]).filter((v) => v !== undefined))];
// Policy-validation plugins (cdk-nag v3 is one) registered on the app or a stage.
const validationPlugins = [app, ...stacks.map(([stage]) => stage)]
  .reduce((n, s) => n + s.policyValidationBeta1.length, 0);
const out = { validationPlugins, stacks: [] };
for (const [stage, stack] of stacks) {
  const nested = assembly.getNestedAssembly(stage.artifactId);
  const artifact = nested.getStackArtifact(stack.artifactId);
  const template = artifact.template;
  const assets = JSON.parse(readFileSync(join(nested.directory, stack.artifactId + ".assets.json"), "utf8"));
  out.stacks.push({
    stage: stage.stageName,
    stack: stack.stackName,
    aliases: of(template, "AWS::KMS::Alias").map((a) => a.Properties.AliasName),
    apiNames: of(template, "AWS::ApiGatewayV2::Api").map((a) => a.Properties.Name),
    rootKeyParameters: variables(template, "SVC_ROOT_KEY_PARAMETER"),
    namespaces: variables(template, "POWERTOOLS_METRICS_NAMESPACE"),
    runnerPrefixes: variables(template, "SVC_RUNNER_PREFIX"),
    tableNames: of(template, "AWS::DynamoDB::Table").map((t) => t.Properties.TableName ?? null),
    alarms: of(template, "AWS::CloudWatch::Alarm").length,
    dashboards: of(template, "AWS::CloudWatch::Dashboard").length,
    functionCodePaths: [...new Set(Object.values(assets.files).map((f) => f.source.path))]
      .filter((path) => !path.endsWith(".template.json")),
    aspects: Aspects.of(stack).all.length + Aspects.of(stage).all.length + Aspects.of(app).all.length,
  });
}
console.log(JSON.stringify(out));
`;

// The same, typed: the declarations must let a TypeScript app use the construct and its props.
const TYPED_APP = `
import { App, Stack } from "aws-cdk-lib";
import { RetentionDays } from "aws-cdk-lib/aws-logs";
import { TokenizationVault, type TokenizationVaultProps, DEFAULT_ALARM_THRESHOLDS } from "svc-vault/cdk";

const props: TokenizationVaultProps = {
  emailSender: "vault@example.com",
  logRetention: RetentionDays.ONE_YEAR,
  rateLimit: { perSecond: 100 },
  alarmThresholds: { apiP99LatencyMs: DEFAULT_ALARM_THRESHOLDS.apiP99LatencyMs * 2 },
  reservedConcurrency: { tokens: 10 },
};
const vault = new TokenizationVault(new Stack(new App(), "S"), "Vault", props);
const url: string = vault.url;
const tableName: string = vault.data.table.tableName;
// @ts-expect-error emailSender is required
new TokenizationVault(new Stack(new App(), "T"), "Vault", {});
// @ts-expect-error not a function group
new TokenizationVault(new Stack(new App(), "U"), "Vault", { emailSender: "a@b.co", reservedConcurrency: { token: 1 } });
export { url, tableName };
`;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "svc-pack-"));
  // `npm pack` runs `prepack` (scripts/build-cdk.ts) first, as `npm publish` would.
  const { stdout } = await run("npm", ["pack", "--json", "--pack-destination", dir], {
    cwd: REPO_ROOT,
    maxBuffer: 64 * 1024 * 1024,
  });
  const [packed] = JSON.parse(stdout.slice(stdout.indexOf("["))) as { filename: string }[];
  tarball = join(dir, packed?.filename ?? "");

  const app = join(dir, "app");
  const modules = join(app, "node_modules");
  mkdirSync(modules, { recursive: true });
  await run("tar", ["-xzf", tarball, "-C", modules]);
  installed = join(modules, "svc-vault");
  renameSync(join(modules, "package"), installed);
  for (const name of readdirSync(join(REPO_ROOT, "node_modules")))
    if (!name.startsWith(".")) symlinkSync(join(REPO_ROOT, "node_modules", name), join(modules, name));
  writeFileSync(
    join(app, "package.json"),
    JSON.stringify({ name: "payments-infra", type: "module", private: true }),
  );
  writeFileSync(join(app, "app.mjs"), APP);

  const result = await run(process.execPath, ["app.mjs"], {
    cwd: app,
    env: { PATH: process.env.PATH, OUT: join(dir, "cdk.out") },
    maxBuffer: 64 * 1024 * 1024,
  });
  summary = JSON.parse(result.stdout.trim().split("\n").at(-1) ?? "{}");
}, 600_000);

afterAll(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe("the packed package", () => {
  it("holds the built construct, the Lambda sources and nothing of the repository's tests or state", async () => {
    const { stdout } = await run("tar", ["-tzf", tarball]);
    const files = stdout.split("\n").filter(Boolean);
    for (const file of [
      "package/dist/cdk/index.js",
      "package/dist/cdk/index.d.ts",
      "package/functions/tokens/handler.ts",
      "package/shared/sandbox/child.mjs",
      "package/lib/sandbox-shims/events.cjs",
      "package/scripts/build-sandbox-packages.ts",
      "package/scripts/build-elements.ts",
      "package/elements/src/elements.ts",
      "package/bin/svc-vault.mjs",
    ])
      expect(files).toContain(file);
    expect(files.filter((f) => /^package\/(test|docs|\.svc-data|cdk\.out|node_modules)\//.test(f))).toEqual(
      [],
    );
    const manifest = JSON.parse(readFileSync(join(installed, "package.json"), "utf8"));
    expect(manifest.exports["./cdk"]).toEqual({
      types: "./dist/cdk/index.d.ts",
      default: "./dist/cdk/index.js",
    });
  });

  it("synthesizes two stages of one account with the construct, every name apart", () => {
    const [staging, production] = summary.stacks as [StackSummary, StackSummary];
    expect(summary.stacks.map((s) => s.stack)).toEqual(["Staging-Payments", "Production-Payments"]);
    for (const field of [
      "aliases",
      "apiNames",
      "rootKeyParameters",
      "namespaces",
      "runnerPrefixes",
    ] as const) {
      expect(staging[field], field).toHaveLength(1);
      expect(production[field], field).toHaveLength(1);
      expect(staging[field][0], field).not.toBe(production[field][0]);
    }
    expect(staging.aliases[0]).toMatch(/^alias\/Staging-Payments-Vault-[0-9a-f]{6}-data$/);
    expect(staging.rootKeyParameters[0]).toMatch(/^\/Staging-Payments-Vault-[0-9a-f]{6}\/root-key-hash$/);
    // Table names are left to CloudFormation (unique by construction).
    expect([...staging.tableNames, ...production.tableNames]).toEqual([null, null]);
    expect(staging.alarms).toBeGreaterThan(20);
    expect(staging.dashboards).toBe(1);
  });

  it("bundles the Lambda code from the installed package, not from the app's directory", () => {
    for (const stack of summary.stacks) expect(stack.functionCodePaths).toEqual([installed]);
  });

  it("forces no cdk-nag checks on the app that embeds it", () => {
    expect(summary.validationPlugins).toBe(0);
    for (const stack of summary.stacks) expect(stack.aspects).toBe(0);
  });

  it("builds a handler from the installed package's sources and dependencies", async () => {
    const result = await build({
      entryPoints: [join(installed, "functions", "tokens", "handler.ts")],
      absWorkingDir: installed,
      bundle: true,
      platform: "node",
      format: "esm",
      write: false,
      logLevel: "silent",
    });
    expect(result.errors).toEqual([]);
    expect(result.outputFiles?.[0]?.text.length).toBeGreaterThan(100_000);
  });

  it("types: a TypeScript app compiles against the declarations", async () => {
    const app = join(dir, "app");
    writeFileSync(join(app, "typed.ts"), TYPED_APP);
    writeFileSync(
      join(app, "tsconfig.json"),
      JSON.stringify({
        compilerOptions: {
          target: "ES2022",
          module: "nodenext",
          moduleResolution: "nodenext",
          strict: true,
          noEmit: true,
          skipLibCheck: true,
          types: [],
        },
        files: ["typed.ts"],
      }),
    );
    const tsc = join(REPO_ROOT, "node_modules", "typescript", "bin", "tsc");
    const result = await run(process.execPath, [tsc, "-p", "tsconfig.json"], { cwd: app }).catch(
      (error: { stdout?: string }) => ({ stdout: error.stdout ?? String(error) }),
    );
    expect(result.stdout).toBe("");
  });
});
