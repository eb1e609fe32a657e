// Documents process entry: the environment becomes config, the service starts, signals close it.
import { onShutdown } from "@redline/service-kit";
import { loadConfig } from "./config.js";
import { startDocumentsService } from "./service.js";

const service = await startDocumentsService(loadConfig(process.env));
onShutdown(() => service.close());
