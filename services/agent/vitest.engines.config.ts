import { fileURLToPath } from "node:url";
import { defineConfig } from "vitest/config";

// Runs the engine and scripted-server tests without the root globalSetup: they need no
// Postgres, NATS or S3, so they stay runnable while the rest of the stack is down.
export default defineConfig({
  root: fileURLToPath(new URL("../..", import.meta.url)),
  test: {
    include: ["services/agent/src/engines/**/*.test.ts", "test/support/**/*.test.ts"],
    testTimeout: 60_000,
    pool: "forks",
  },
});
