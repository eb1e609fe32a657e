// Ingest process entry: the only place that reads the environment.
import { onShutdown } from "@redline/service-kit";
import { readIngestEnv } from "./config.js";
import { startIngestService } from "./service.js";

const service = await startIngestService(readIngestEnv(process.env));
onShutdown(() => service.close());
