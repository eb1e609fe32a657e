// `pnpm start`: runs the whole Redline stack in the foreground (@redline/local-stack's
// runForeground). Data in $REDLINE_DATA_DIR or <repo>/.redline. Ctrl-C / SIGTERM stops the
// gateway, the services (each drains), then the infrastructure, and exits 0; the copies of that
// signal the wrappers forward are ignored, and a second Ctrl-C seconds later kills the services
// at once.
import { runForeground } from "@redline/local-stack";

const stack = await runForeground({ env: process.env });
if (stack) {
  console.log(`Redline is up at ${stack.gatewayUrl}`);
  console.log(`Review playground: ${stack.gatewayUrl}/playground (paste an API key)`);
}
