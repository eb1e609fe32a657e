// Entry of a converter worker process run from sources (once compiled, pool.ts forks
// dist/sandbox/worker-main.js directly). Plain JavaScript because a worker inherits neither the
// tsx loader of its parent process nor vitest's transform: it registers tsx itself, then loads
// the TypeScript body.
import { register } from "tsx/esm/api";

register();
await import("./worker-main.ts");
