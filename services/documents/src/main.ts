// Documents process entry: the only place that reads the environment.
import { DEFAULT_ADDRS, onShutdown } from "@redline/service-kit";
import { startDocumentsService } from "./service.js";

const env = process.env;
if (!env.DATABASE_URL || !env.NATS_URL) throw new Error("DATABASE_URL and NATS_URL must be set (pnpm start sets them)");
const service = await startDocumentsService({
  grpcAddress: env.DOCUMENTS_ADDR ?? DEFAULT_ADDRS.documents,
  databaseUrl: env.DATABASE_URL,
  natsUrl: env.NATS_URL,
  logLevel: env.LOG_LEVEL,
});
onShutdown(() => service.close());
