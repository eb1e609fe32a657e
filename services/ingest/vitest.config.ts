import { fileURLToPath } from "node:url";
import { defineConfig } from "vitest/config";

// Ingest needs no infrastructure: this config runs its tests without the root globalSetup
// (Postgres/NATS/S3): `pnpm vitest run -c services/ingest/vitest.config.ts`.
export default defineConfig({
  test: {
    root: fileURLToPath(new URL(".", import.meta.url)),
    include: ["src/**/*.test.ts"],
    testTimeout: 60_000,
    pool: "forks",
  },
});
