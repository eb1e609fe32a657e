// Documents process entry: `main.js` serves once the schema is current, `main.js migrate`
// migrates it; SIGTERM drains and exits (service-kit runServiceMain).
import { runServiceMain } from "@redline/service-kit";
import { loadConfig } from "./config.js";
import { migrations, SCHEMA } from "./db/migrations.js";
import { startDocumentsService } from "./service.js";

await runServiceMain("documents", process.argv.slice(2), () => {
  const cfg = loadConfig(process.env);
  return {
    logLevel: cfg.logLevel,
    tracing: cfg.tracing,
    schema: { schema: SCHEMA, migrations, databaseUrl: cfg.databaseUrl },
    start: () => startDocumentsService(cfg, { migrate: false }),
  };
});
