// Gateway process entry: the only reader of process.env. Serves until SIGTERM/SIGINT, then
// stops gracefully (service.ts close); `main.js migrate` has nothing to do (no schema).
import { runServiceMain } from "@redline/service-kit";
import { loadConfig } from "./config.js";
import { startGateway } from "./service.js";

await runServiceMain("gateway", process.argv.slice(2), () => {
  const cfg = loadConfig(process.env);
  return { logLevel: cfg.logLevel, tracing: cfg.tracing, start: () => startGateway(cfg) };
});
