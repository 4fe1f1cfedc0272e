import { defineConfig } from "vitest/config";

/**
 * Four projects, so a unit loop never waits for Java, a browser or a synth:
 * - unit: pure rules and in-process parts; builds the sandbox packages the sandbox tests require, nothing else;
 * - integration: through HTTP against one in-memory DynamoDB Local for the whole run;
 * - browser: Elements in Debian's chromium (playwright-core), against the same kind of DynamoDB Local;
 * - infra: CDK assertions on synthesized templates (a synth takes tens of seconds on a busy machine).
 */
export default defineConfig({
  test: {
    env: { LOG_LEVEL: "SILENT", POWERTOOLS_LOG_LEVEL: "SILENT" },
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // Two cores: more workers only fight over CPU with DynamoDB Local.
    maxWorkers: 2,
    // Transformed modules kept on disk between runs (keyed by content and config; no plugins here), as Vitest 5
    // does by default: a rerun skips most of the main process's transform work.
    experimental: { fsModuleCache: true },
    // Workers run as production does: Object.prototype.__proto__ throws (docs/security.md, process integrity).
    execArgv: ["--disable-proto=throw"],
    reporters: ["default"],
    projects: [
      {
        extends: true,
        test: {
          name: "unit",
          include: ["test/unit/**/*.test.ts"],
          // One worker runs many files and keeps their imports: half the project's time was each file's fresh
          // process and imports. A unit test restores what it changes (env, stubs, spies; vitest restores mocks).
          // A unit test must not vi.mock a module another test file may load (the mock misses a module already loaded
          // in the worker, review s53): it injects the functions instead (as run-lock.ts's LockFs).
          isolate: false,
          globalSetup: ["test/support/scratch-dir.ts", "test/support/sandbox-packages-setup.ts"],
        },
      },
      {
        extends: true,
        test: {
          name: "integration",
          include: ["test/integration/**/*.test.ts"],
          globalSetup: ["test/support/scratch-dir.ts", "test/support/global-setup.ts"],
          // Tests of hundreds of writes take 7-9 s on a quiet machine and passed 30 s with both cores busy
          // (a purge among 200 expiring tokens, a shred of 52 key versions): a CI machine is rarely quiet.
          testTimeout: 120_000,
        },
      },
      {
        extends: true,
        test: {
          name: "browser",
          include: ["test/browser/**/*.test.ts"],
          globalSetup: ["test/support/scratch-dir.ts", "test/support/global-setup.ts"],
        },
      },
      {
        extends: true,
        test: {
          name: "infra",
          include: ["test/infra/**/*.test.ts"],
          globalSetup: ["test/support/scratch-dir.ts"],
          // A synth with bundling takes about 20 s on a quiet machine and several times that on a busy one.
          hookTimeout: 300_000,
          testTimeout: 120_000,
        },
      },
    ],
  },
});
