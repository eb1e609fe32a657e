// Reading the sessions service's environment into typed config (only main.ts calls this).
import {
  listenAddr,
  readAddrs,
  readMetricsAddr,
  readTracingEnv,
  requireEnv,
  type ServiceAddrs,
  type TracingConfig,
} from "@redline/service-kit";

type Env = Record<string, string | undefined>;

/** Sessions configuration. */
export interface SessionsConfig {
  /** METRICS_ADDR: host:port of GET /metrics (port 0 picks one), "off" records nothing; unset: not served. */
  metricsAddr?: string;
  /** host:port to serve on; port 0 picks a free port. */
  grpcAddress: string;
  /** Postgres holding the `sessions` schema. */
  databaseUrl: string;
  /** The documents service, called by the workspace workflows (save, archive, unarchive, upload). */
  addrs: Pick<ServiceAddrs, "documents">;
  logLevel?: string;
  /** OTLP trace export from OTEL_EXPORTER_OTLP_(TRACES_)ENDPOINT and OTEL_SERVICE_NAME; absent: off. */
  tracing?: TracingConfig;
}

/**
 * LISTEN_ADDR (the bind address; default SESSIONS_ADDR, else 127.0.0.1:8062), DATABASE_URL
 * (required), DOCUMENTS_ADDR and LOG_LEVEL.
 */
export function loadConfig(env: Env): SessionsConfig {
  const addrs = readAddrs(env);
  return {
    grpcAddress: listenAddr(env, "sessions"),
    metricsAddr: readMetricsAddr(env),
    databaseUrl: requireEnv(env, "DATABASE_URL"),
    addrs: { documents: addrs.documents },
    logLevel: env.LOG_LEVEL,
    tracing: readTracingEnv(env),
  };
}
