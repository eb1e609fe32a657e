// Billing configuration: the only code of the service that reads environment variables.
import { listenAddr, requireEnv } from "@redline/service-kit";

/** What the billing service needs: where to listen and its database. */
export interface BillingConfig {
  /** host:port of the gRPC server; port 0 picks a free port. */
  grpcAddress: string;
  /** Postgres URL; the service keeps its rows in schema `billing`. */
  databaseUrl: string;
  /** pino level; default info. */
  logLevel?: string;
}

/**
 * Reads LISTEN_ADDR (the bind address; default BILLING_ADDR, else 127.0.0.1:50064), DATABASE_URL
 * (required) and LOG_LEVEL.
 */
export function loadConfig(env: Record<string, string | undefined>): BillingConfig {
  return {
    grpcAddress: listenAddr(env, "billing"),
    databaseUrl: requireEnv(env, "DATABASE_URL"),
    logLevel: env.LOG_LEVEL,
  };
}
