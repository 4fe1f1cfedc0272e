import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    globalSetup: ["test/support/global-setup.ts"],
    env: { LOG_LEVEL: "SILENT", POWERTOOLS_LOG_LEVEL: "SILENT" },
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // Two cores: more workers only fight over CPU with DynamoDB Local.
    maxWorkers: 2,
    // Workers run as production does: Object.prototype.__proto__ throws (docs/security.md, process integrity).
    execArgv: ["--disable-proto=throw"],
    reporters: ["default"],
  },
});
