// The agent process: config from the environment, the service, and a clean shutdown.
import { onShutdown } from "@redline/service-kit";
import { loadConfig } from "./config.js";
import { startAgentService } from "./service.js";

const service = await startAgentService(loadConfig(process.env));
onShutdown(() => service.close());
