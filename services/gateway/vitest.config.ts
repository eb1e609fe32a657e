import { defineConfig } from "vitest/config";

// The gateway's own tests need no backend (closed ports or in-process fake gRPC services), so
// they run without the root config's global setup: `pnpm vitest run --config services/gateway/vitest.config.ts`.
export default defineConfig({
  test: {
    root: import.meta.dirname,
    include: ["src/**/*.test.ts"],
    testTimeout: 30_000,
    hookTimeout: 30_000,
  },
});
