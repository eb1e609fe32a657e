// Vite build of the playground into dist/, served by the gateway at /playground/ (its assets
// under /playground/assets/, content-hashed). @redline/client is bundled from its TypeScript
// sources (the workspace's "@redline/source" export condition), so no client build is needed.
import { defaultClientConditions, defineConfig } from "vite";

export default defineConfig({
  base: "/playground/",
  // `pnpm --filter @redline/playground exec vite`: the page calls its own origin, so the dev server passes
  // the API through to the gateway of `pnpm start`.
  server: { proxy: { "/v1": "http://127.0.0.1:8080" } },
  resolve: { conditions: ["@redline/source", ...defaultClientConditions] },
  build: {
    outDir: "dist",
    emptyOutDir: true,
    target: "es2022",
    // The CSP allows no inline script: Vite's modulepreload polyfill would be one more file, and
    // every browser the page targets has modulepreload.
    modulePreload: { polyfill: false },
    sourcemap: false,
    reportCompressedSize: false,
  },
});
