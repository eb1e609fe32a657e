// Entry point: the only reader of process.env. Starts the gateway and closes it on SIGINT/SIGTERM.
import { onShutdown } from "@redline/service-kit";
import { loadConfig } from "./config.js";
import { startGateway } from "./service.js";

const gateway = await startGateway(loadConfig(process.env));
onShutdown(() => gateway.close());
