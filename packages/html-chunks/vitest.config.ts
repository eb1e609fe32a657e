import { fileURLToPath } from "node:url";
import { defineConfig } from "vitest/config";

// Standalone config for this package's unit tests: no globalSetup, since the
// chunk model needs no infrastructure. The root config runs these tests too.
export default defineConfig({
  test: {
    root: fileURLToPath(new URL("../..", import.meta.url)),
    include: ["packages/html-chunks/src/**/*.test.ts"],
    // Same as the root config: property and size tests are slow on a loaded machine.
    testTimeout: 60_000,
  },
});
