// Billing process entry: config from the environment, the service, and a clean shutdown.
import { onShutdown } from "@redline/service-kit";
import { loadConfig } from "./config.js";
import { startBillingService } from "./service.js";

const service = await startBillingService(loadConfig(process.env));
onShutdown(() => service.close());
