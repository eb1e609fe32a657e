// Sessions process entry: the only place that reads the environment.
import { onShutdown } from "@redline/service-kit";
import { loadConfig } from "./config.js";
import { startSessionsService } from "./service.js";

const service = await startSessionsService(loadConfig(process.env));
onShutdown(() => service.close());
