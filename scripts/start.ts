// `pnpm start`: runs the whole Redline stack in the foreground (see scripts/lib/stack.ts).
// Data in $REDLINE_DATA_DIR or <repo>/.redline. Ctrl-C / SIGTERM stops the gateway, the
// services, then the infrastructure, and exits 0. A second Ctrl-C exits at once (children are
// tied to this process and die with it).
import { startStack } from "./lib/stack.js";

const abort = new AbortController();
let stack: Awaited<ReturnType<typeof startStack>> | undefined;
let shuttingDown = false;
// Keeps the supervisor alive even if every service has given up.
const keepAlive = setInterval(() => {}, 1 << 30);

function onSignal(sig: NodeJS.Signals): void {
  if (shuttingDown) {
    console.error(`[supervisor] ${sig} again: exiting now`);
    process.exit(1);
  }
  shuttingDown = true;
  console.log(`[supervisor] ${sig} received, shutting down`);
  abort.abort();
  if (!stack) return; // startup in progress: startStack cleans up and rejects
  stack.stop().then(
    () => process.exit(0),
    (err: unknown) => {
      console.error(`[supervisor] shutdown error: ${(err as Error).message}`);
      process.exit(1);
    },
  );
}
for (const sig of ["SIGINT", "SIGTERM", "SIGHUP"] as const) process.on(sig, onSignal);

try {
  stack = await startStack({ env: process.env, foreground: true, signal: abort.signal });
} catch (err) {
  clearInterval(keepAlive);
  if (shuttingDown) {
    console.log("[supervisor] startup aborted");
    process.exit(0);
  }
  console.error(`[supervisor] ${(err as Error).message}`);
  process.exit(1);
}
if (shuttingDown) {
  await stack.stop();
  process.exit(0);
}
console.log(`Redline is up at ${stack.gatewayUrl}`);
