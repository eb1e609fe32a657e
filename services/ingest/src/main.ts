// Ingest process entry: `main.js` serves once the schema is current, `main.js migrate`
// migrates it; SIGTERM drains and exits (service-kit runServiceMain). Without DATABASE_URL
// ingest keeps no files and has no schema to check.
import { runServiceMain } from "@redline/service-kit";
import { loadConfig } from "./config.js";
import { migrations, SCHEMA } from "./db/migrations.js";
import { startIngestService } from "./service.js";

await runServiceMain("ingest", process.argv.slice(2), () => {
  const cfg = loadConfig(process.env);
  return {
    logLevel: cfg.logLevel,
    tracing: cfg.tracing,
    schema: { schema: SCHEMA, migrations, databaseUrl: cfg.databaseUrl },
    start: () => startIngestService(cfg, { migrate: false }),
  };
});
