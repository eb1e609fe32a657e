// Reading the documents service's environment into typed config: the only code that reads env vars.
import { listenAddr, readMetricsAddr, readTracingEnv, requireEnv, type TracingConfig } from "@redline/service-kit";

/** Documents configuration. */
export interface DocumentsConfig {
  /** METRICS_ADDR: host:port of GET /metrics (port 0 picks one), "off" records nothing; unset: not served. */
  metricsAddr?: string;
  /** host:port to serve gRPC on; port 0 picks a free port. */
  grpcAddress: string;
  /** Postgres holding the `documents` schema. */
  databaseUrl: string;
  /** NATS (JetStream) the outbox relay publishes document events to. */
  natsUrl: string;
  logLevel?: string;
  /** OTLP trace export from OTEL_EXPORTER_OTLP_(TRACES_)ENDPOINT and OTEL_SERVICE_NAME; absent: off. */
  tracing?: TracingConfig;
}

/**
 * DocumentsConfig from LISTEN_ADDR (the bind address, e.g. 0.0.0.0:8061; default DOCUMENTS_ADDR,
 * else 127.0.0.1:8061), DATABASE_URL, NATS_URL (both required; throws naming the missing one)
 * and LOG_LEVEL.
 */
export function loadConfig(env: Record<string, string | undefined>): DocumentsConfig {
  const [databaseUrl, natsUrl] = [requireEnv(env, "DATABASE_URL"), requireEnv(env, "NATS_URL")];
  return {
    grpcAddress: listenAddr(env, "documents"),
    metricsAddr: readMetricsAddr(env),
    databaseUrl,
    natsUrl,
    logLevel: env.LOG_LEVEL,
    tracing: readTracingEnv(env),
  };
}
