// The agent process: `main.js` serves once the schema is current, `main.js migrate` migrates
// it; SIGTERM hands running jobs back to the other agents, drains and exits (runServiceMain).
import { runServiceMain } from "@redline/service-kit";
import { loadConfig } from "./config.js";
import { migrations, SCHEMA } from "./db/migrations.js";
import { startAgentService } from "./service.js";

await runServiceMain("agent", process.argv.slice(2), () => {
  const cfg = loadConfig(process.env);
  return {
    logLevel: cfg.logLevel,
    tracing: cfg.tracing,
    schema: { schema: SCHEMA, migrations, databaseUrl: cfg.databaseUrl },
    start: () => startAgentService(cfg, {}, { migrate: false }),
  };
});
