// Reading the sessions service's environment into typed config (only main.ts calls this).
import {
  listenAddr,
  numberFromEnv,
  readAddrs,
  readMetricsAddr,
  readTracingEnv,
  requireEnv,
  type ServiceAddrs,
  type TracingConfig,
} from "@redline/service-kit";

type Env = Record<string, string | undefined>;

/** Outbound webhooks (docs/api.md, Webhooks; docs/configuration.md, Webhooks). */
export interface WebhooksConfig {
  /** WEBHOOK_ALLOW_PRIVATE=1: allow http:// and private, loopback and link-local targets (local use, tests). */
  allowPrivate: boolean;
  /** WEBHOOK_RETRY_BASE_MS: the first retry's delay; each next one doubles (webhooks/backoff.ts). */
  retryBaseMs: number;
  /** WEBHOOK_TIMEOUT_MS: one delivery request's bound, connect to last byte. */
  timeoutMs: number;
  /** WEBHOOK_POLL_MS: how often the delivery worker looks for due deliveries. */
  pollMs: number;
  /** WEBHOOK_MAX_ENDPOINTS: endpoints per account (409 past it). */
  maxEndpoints: number;
  /**
   * WEBHOOK_CONSUMER: prefix of the durable JetStream consumer names; every sessions replica of a
   * deployment uses the same one (they share the work), two deployments on one NATS must not.
   */
  consumer: string;
}

export const DEFAULT_WEBHOOKS_CONFIG: WebhooksConfig = {
  allowPrivate: false,
  retryBaseMs: 30_000,
  timeoutMs: 10_000,
  pollMs: 1000,
  maxEndpoints: 20,
  consumer: "redline-webhooks",
};

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
  /** NATS with JetStream: the job and document event streams the webhooks consumer reads. */
  natsUrl: string;
  /** Outbound webhooks; absent fields take DEFAULT_WEBHOOKS_CONFIG. */
  webhooks?: Partial<WebhooksConfig>;
  logLevel?: string;
  /** OTLP trace export from OTEL_EXPORTER_OTLP_(TRACES_)ENDPOINT and OTEL_SERVICE_NAME; absent: off. */
  tracing?: TracingConfig;
}

/**
 * LISTEN_ADDR (the bind address; default SESSIONS_ADDR, else 127.0.0.1:8062), DATABASE_URL
 * (required), NATS_URL (required), DOCUMENTS_ADDR, LOG_LEVEL and the WEBHOOK_* settings.
 */
export function loadConfig(env: Env): SessionsConfig {
  const addrs = readAddrs(env);
  return {
    grpcAddress: listenAddr(env, "sessions"),
    metricsAddr: readMetricsAddr(env),
    databaseUrl: requireEnv(env, "DATABASE_URL"),
    natsUrl: requireEnv(env, "NATS_URL"),
    webhooks: readWebhooksEnv(env),
    addrs: { documents: addrs.documents },
    logLevel: env.LOG_LEVEL,
    tracing: readTracingEnv(env),
  };
}

/** The WEBHOOK_* variables; unset ones are left out (DEFAULT_WEBHOOKS_CONFIG applies). */
function readWebhooksEnv(env: Env): Partial<WebhooksConfig> {
  const positive = (name: string) =>
    numberFromEnv(env, name, (n) => Number.isInteger(n) && n > 0, "a positive integer");
  const flag = env.WEBHOOK_ALLOW_PRIVATE;
  if (flag !== undefined && !["", "0", "1"].includes(flag))
    throw new Error(`WEBHOOK_ALLOW_PRIVATE must be 0 or 1, got "${flag}"`);
  const out: Partial<WebhooksConfig> = {
    allowPrivate: flag === "1",
    retryBaseMs: positive("WEBHOOK_RETRY_BASE_MS"),
    timeoutMs: positive("WEBHOOK_TIMEOUT_MS"),
    pollMs: positive("WEBHOOK_POLL_MS"),
    maxEndpoints: positive("WEBHOOK_MAX_ENDPOINTS"),
    consumer: env.WEBHOOK_CONSUMER || undefined,
  };
  return Object.fromEntries(Object.entries(out).filter(([, v]) => v !== undefined));
}
