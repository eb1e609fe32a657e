import { defineConfig } from "vitest/config";

// One run covers unit tests next to the code and the system tests in test/.
// The global setup starts real Postgres, NATS and S3 once for the whole run.
export default defineConfig({
  test: {
    include: [
      "packages/*/src/**/*.test.ts",
      "services/*/src/**/*.test.ts",
      "test/**/*.test.ts",
      "scripts/**/*.test.ts",
    ],
    globalSetup: ["test/global-setup.ts"],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    pool: "forks",
    maxWorkers: 2,
    reporters: ["default", ["json", { outputFile: ".redline/test-results.json" }]],
  },
});
