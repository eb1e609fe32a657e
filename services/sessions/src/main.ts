// Sessions process entry: the only place that reads the environment.
import { DEFAULT_ADDRS, onShutdown } from "@redline/service-kit";
import { startSessionsService } from "./service.js";

const env = process.env;
if (!env.DATABASE_URL) throw new Error("DATABASE_URL is not set (pnpm start sets it)");
const service = await startSessionsService({
  grpcAddress: env.SESSIONS_ADDR ?? DEFAULT_ADDRS.sessions,
  databaseUrl: env.DATABASE_URL,
  logLevel: env.LOG_LEVEL,
});
onShutdown(() => service.close());
