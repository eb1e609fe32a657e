// Billing process entry: the only place that reads the environment.
import { DEFAULT_ADDRS, onShutdown } from "@redline/service-kit";
import { startBillingService } from "./service.js";

const env = process.env;
if (!env.DATABASE_URL) throw new Error("DATABASE_URL is not set (pnpm start sets it)");
const service = await startBillingService({
  grpcAddress: env.BILLING_ADDR ?? DEFAULT_ADDRS.billing,
  databaseUrl: env.DATABASE_URL,
  logLevel: env.LOG_LEVEL,
});
onShutdown(() => service.close());
