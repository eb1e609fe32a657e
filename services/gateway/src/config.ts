// Gateway configuration: loadConfig(env) turns environment variables into one typed config;
// only main.ts passes process.env, tests build configs with gatewayConfig().
import {
  DEFAULT_ADDRS,
  numberFromEnv as numberVar,
  readAddrs,
  readTracingEnv,
  type ServiceAddrs,
  type TracingConfig,
} from "@redline/service-kit";

/** Everything the gateway needs to run; sizes in MB (MiB), durations in milliseconds. */
export interface GatewayConfig {
  /** Interface to listen on. */
  host: string;
  /** Port to listen on; 0 picks a free one. */
  port: number;
  /** host:port of each gRPC service. */
  addrs: ServiceAddrs;
  /** Application request body cap in MB (1 MB = 1,048,576 bytes); over it → 413 (Errors rule 5). */
  maxRequestMb: number;
  /** Contact address put in 413 bodies. */
  supportEmail: string;
  /** Wall-clock cap of AI processing; the chat RPC deadline is this plus CHAT_DEADLINE_GRACE_MS. */
  aiTimeoutMs: number;
  /** How long a resolved API key is trusted before billing is asked again (revocation delay). */
  authCacheTtlMs: number;
  /** pino level: trace, debug, info, warn, error, fatal or silent. */
  logLevel: string;
  /** OTLP trace export from OTEL_EXPORTER_OTLP_(TRACES_)ENDPOINT and OTEL_SERVICE_NAME; absent: off. */
  tracing?: TracingConfig;
  /** NATS carrying job events to progress streams; unset: streams poll the agent instead. */
  natsUrl?: string;
  /** Comment heartbeat period of an idle progress stream (default 15 s). */
  streamHeartbeatMs?: number;
}

/** Extra time the chat RPC gets beyond aiTimeoutMs, so the agent can answer its own 504 first. */
export const CHAT_DEADLINE_GRACE_MS = 15_000;

const DEFAULTS: GatewayConfig = {
  host: "127.0.0.1",
  port: 8080,
  addrs: DEFAULT_ADDRS,
  maxRequestMb: 100,
  supportEmail: "support@redline.local",
  aiTimeoutMs: 30 * 60 * 1000,
  authCacheTtlMs: 5000,
  logLevel: "info",
};

/** A full config from defaults plus `overrides` (tests and scripts). */
export function gatewayConfig(overrides: Partial<GatewayConfig> = {}): GatewayConfig {
  return { ...DEFAULTS, ...overrides, addrs: { ...DEFAULTS.addrs, ...overrides.addrs } };
}

type Env = Record<string, string | undefined>;

/**
 * Reads PORT (default 8080), HOST (127.0.0.1), *_ADDR, MAX_REQUEST_MB (100), SUPPORT_EMAIL,
 * AI_TIMEOUT_MS (30 min), AUTH_CACHE_TTL_MS (5000), LOG_LEVEL (info) and NATS_URL (job events).
 * Throws an Error naming the variable when a number is malformed or out of range.
 */
export function loadConfig(env: Env): GatewayConfig {
  const port = numberVar(env, "PORT", (n) => Number.isInteger(n) && n >= 0 && n <= 65535, "an integer 0..65535");
  const maxRequestMb = numberVar(env, "MAX_REQUEST_MB", (n) => n > 0, "a positive number");
  const aiTimeoutMs = numberVar(env, "AI_TIMEOUT_MS", (n) => Number.isInteger(n) && n > 0, "a positive integer");
  const authCacheTtlMs = numberVar(env, "AUTH_CACHE_TTL_MS", (n) => Number.isInteger(n) && n >= 0, "an integer >= 0");
  return gatewayConfig({
    host: env.HOST || DEFAULTS.host,
    addrs: readAddrs(env),
    logLevel: env.LOG_LEVEL || DEFAULTS.logLevel,
    tracing: readTracingEnv(env),
    supportEmail: env.SUPPORT_EMAIL || DEFAULTS.supportEmail,
    natsUrl: env.NATS_URL || undefined,
    ...(port !== undefined && { port }),
    ...(maxRequestMb !== undefined && { maxRequestMb }),
    ...(aiTimeoutMs !== undefined && { aiTimeoutMs }),
    ...(authCacheTtlMs !== undefined && { authCacheTtlMs }),
  });
}

/** The body cap in bytes. */
export function maxRequestBytes(cfg: GatewayConfig): number {
  return Math.floor(cfg.maxRequestMb * 1024 * 1024);
}
