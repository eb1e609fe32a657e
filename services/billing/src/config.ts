// Billing configuration: the only code of the service that reads environment variables.
import { listenAddr, readTracingEnv, requireEnv, type TracingConfig } from "@redline/service-kit";

/** What the billing service needs: where to listen and its database. */
export interface BillingConfig {
  /** host:port of the gRPC server; port 0 picks a free port. */
  grpcAddress: string;
  /** Postgres URL; the service keeps its rows in schema `billing`. */
  databaseUrl: string;
  /** pino level; default info. */
  logLevel?: string;
  /** OTLP trace export from OTEL_EXPORTER_OTLP_(TRACES_)ENDPOINT and OTEL_SERVICE_NAME; absent: off. */
  tracing?: TracingConfig;
  /** Lets the SetTestClock RPC move billing's clock (test stacks only); default false. */
  testClock?: boolean;
}

/**
 * Reads LISTEN_ADDR (the bind address; default BILLING_ADDR, else 127.0.0.1:50064), DATABASE_URL
 * (required), LOG_LEVEL and REDLINE_TEST_CLOCK ("1" enables SetTestClock; never set it in production).
 */
export function loadConfig(env: Record<string, string | undefined>): BillingConfig {
  return {
    grpcAddress: listenAddr(env, "billing"),
    databaseUrl: requireEnv(env, "DATABASE_URL"),
    logLevel: env.LOG_LEVEL,
    tracing: readTracingEnv(env),
    testClock: env.REDLINE_TEST_CLOCK === "1",
  };
}
