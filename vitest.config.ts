import { defineConfig } from "vitest/config";

// One run covers unit tests next to the code and the system tests in test/.
// The global setup starts real Postgres, NATS and S3 once for the whole run.
//
// Workspace packages export their compiled dist/ by default and their TypeScript sources under
// the "@redline/source" condition (tsconfig customConditions, tsx --conditions): tests import the
// sources, and processes they spawn (a service under tsx, a converter worker) inherit the
// condition through NODE_OPTIONS.
const SOURCE_CONDITION = "@redline/source";
// Vite's default server conditions, which a list given here replaces, after ours, without
// "module": vitest hands these to the test workers as Node --conditions, and "module" then makes
// Node itself load bundler-only builds (@opentelemetry/*'s build/esm: extensionless imports
// Node cannot resolve). Without it, tests load what production's plain Node loads.
const RESOLVE_CONDITIONS = [SOURCE_CONDITION, "node", "development|production"];

export default defineConfig({
  // ssr: the test files' environment; __vitest__: the main process's (global setup).
  environments: {
    ssr: { resolve: { conditions: RESOLVE_CONDITIONS } },
    __vitest__: { resolve: { conditions: RESOLVE_CONDITIONS } },
  },
  test: {
    env: { NODE_OPTIONS: [process.env.NODE_OPTIONS, `--conditions=${SOURCE_CONDITION}`].filter(Boolean).join(" ") },
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
