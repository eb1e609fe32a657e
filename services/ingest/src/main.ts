// Ingest process entry: the only place that reads the environment.
import { onShutdown } from "@redline/service-kit";
import { loadConfig } from "./config.js";
import { startIngestService } from "./service.js";

const service = await startIngestService(loadConfig(process.env));
onShutdown(() => service.close());
