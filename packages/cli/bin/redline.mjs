#!/usr/bin/env node
// The `redline` command. In the checkout (src/ present and tsx installed) it runs the TypeScript
// sources through tsx, resolving workspace packages to their sources (the "@redline/source"
// condition) with a resolve hook, in this same process: no child to forward Ctrl-C to, so a
// SIGINT reaches the code that cancels the running job exactly once. Sources win over a dist/
// left by `pnpm build`, which may be stale (or still being written by a build). A published
// package (bin and dist only) runs dist/main.js.
import { existsSync } from "node:fs";
import { register } from "node:module";

const source = new URL("../src/main.ts", import.meta.url);
const tsx = existsSync(source) ? await import("tsx/esm/api").catch(() => undefined) : undefined;
if (tsx) {
  tsx.register();
  register("./source-conditions.mjs", import.meta.url);
  await import(source.href);
} else {
  await import(new URL("../dist/main.js", import.meta.url).href);
}
