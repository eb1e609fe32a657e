// The `redline` entry (bin/redline.mjs, `pnpm redline`): the one place that touches the process:
// its streams, environment, SIGINT and exit code.
import { run } from "./cli.js";

const code = await run(process.argv.slice(2), {
  stdin: process.stdin,
  stdout: process.stdout,
  stderr: process.stderr,
  env: process.env,
  onInterrupt(handler) {
    process.on("SIGINT", handler);
    return () => process.off("SIGINT", handler);
  },
});
// Exit now: an open keep-alive socket or stdin must not hold the command after its result.
process.exit(code);
