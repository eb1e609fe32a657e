// Gateway configuration: loadConfig(env) turns environment variables into one typed config;
// only main.ts passes process.env, tests build configs with gatewayConfig().
import {
  DEFAULT_ADDRS,
  numberFromEnv as numberVar,
  readAddrs,
  readMetricsAddr,
  readTracingEnv,
  type ServiceAddrs,
  type TracingConfig,
} from "@redline/service-kit";
import express from "express";

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
  /** METRICS_ADDR: host:port of GET /metrics (port 0 picks one), "off" records nothing; unset: not served. */
  metricsAddr?: string;
  /** Comment heartbeat period of an idle progress stream (default 15 s). */
  streamHeartbeatMs?: number;
  /**
   * Time a client has to send a whole request, headers and body (REQUEST_TIMEOUT_MS, default
   * 300 s): a body still arriving then is cut off with a 408 JSON. Responses (streams, long chat
   * turns) are not limited by it.
   */
  requestTimeoutMs?: number;
  /**
   * Time a client has to send the request line and headers (HEADERS_TIMEOUT_MS; default 60 s or
   * keepAliveTimeoutMs + 1 s, whichever is longer; at most requestTimeoutMs).
   */
  headersTimeoutMs?: number;
  /**
   * How long an idle keep-alive connection stays open after its last response
   * (KEEP_ALIVE_TIMEOUT_MS, default 65 s). It must outlive the keep-alive of any proxy or client
   * pool in front (ingress-nginx keeps upstream connections 60 s): when the gateway closes first,
   * a request sent on the pooled socket at that moment gets a reset. Node's own default is 5 s.
   */
  keepAliveTimeoutMs?: number;
  /** Per-key token buckets per endpoint class; undefined: DEFAULT_RATE_LIMITS; false: no limits (nor per account). */
  rateLimits?: RateLimitsConfig | false;
  /**
   * Per-account token buckets per endpoint class (the owner: the organization of an organization
   * key, else the user), drawn on together with the key's; undefined: accountLimitsFor(the per-key limits).
   */
  accountRateLimits?: RateLimitsConfig;
  /** Per-source limits of callers billing has not vouched for; undefined: DEFAULT_SOURCE_LIMITS. */
  sourceLimits?: SourceLimitsConfig;
  /**
   * How long a request waits for the shared limiter (billing) before it goes through unlimited
   * (RATE_LIMIT_TIMEOUT_MS, default 500 ms: fail open).
   */
  rateLimitTimeoutMs?: number;
  /** Honour Idempotency-Key on the routes that declare it (default true). */
  idempotency?: boolean;
  /**
   * Which proxies in front of the gateway to believe about the client's address (TRUST_PROXY;
   * express's "trust proxy": a hop count, or addresses, subnets and the names loopback,
   * linklocal, uniquelocal). Unset: none, so the source address of per-source limits (agent
   * sign-ups, sourceLimits) is the TCP peer and X-Forwarded-For is ignored (a client could write any).
   */
  trustProxy?: number | string;
  /**
   * The built review playground served at GET /playground (PLAYGROUND_DIR); unset: beside the
   * gateway's dist/ (the image), else the workspace's packages/playground/dist.
   */
  playgroundDir?: string;
}

/** The endpoint classes of the rate limits; each route declares its class (api/shared/routes.ts). */
export type LimiterClass = "expensive" | "write" | "read";

/** One class's bucket: `capacity` requests of burst, refilled at capacity / windowSeconds per second. */
export interface RateLimitPolicy {
  capacity: number;
  windowSeconds: number;
}

/** The policy of every class. */
export type RateLimitsConfig = Record<LimiterClass, RateLimitPolicy>;

/**
 * Defaults per API key: generous enough that no interactive client (nor the test suite) meets
 * them, low enough that a runaway script is slowed before it floods the model or the converters.
 */
export const DEFAULT_RATE_LIMITS: RateLimitsConfig = {
  expensive: { capacity: 600, windowSeconds: 60 },
  write: { capacity: 3000, windowSeconds: 60 },
  read: { capacity: 6000, windowSeconds: 60 },
};

/**
 * The account bucket of a class holds this many times the key's: one key can use its whole rate
 * (a single script is limited by its key, as before), while a hundred keys of one account share
 * twice that instead of multiplying it a hundredfold.
 */
export const ACCOUNT_LIMIT_FACTOR = 2;

/** The default per-account policies: each class's per-key capacity times ACCOUNT_LIMIT_FACTOR, over the same window. */
export function accountLimitsFor(perKey: RateLimitsConfig): RateLimitsConfig {
  const scaled = (p: RateLimitPolicy) => ({
    capacity: p.capacity * ACCOUNT_LIMIT_FACTOR,
    windowSeconds: p.windowSeconds,
  });
  return { expensive: scaled(perKey.expensive), write: scaled(perKey.write), read: scaled(perKey.read) };
}

/**
 * Per-source (client address, IPv6 by /64: source-address.ts) limits, kept in each gateway's
 * memory because their point is to come before any billing call. Each is a token bucket of that
 * many tokens refilled over a minute; 0 turns it off.
 */
export interface SourceLimitsConfig {
  /** Failed key resolutions (missing, malformed, unknown or revoked key) per source per minute; past them 429 auth_rate_limited before billing is asked. */
  authFailuresPerMinute: number;
  /** Requests to the /v1 routes that take no key (agent sign-up, takeover claim) per source per minute. */
  anonymousPerMinute: number;
}

/**
 * 60 failures a minute is far more than a person mistyping or a client with a revoked key makes
 * before noticing, and lets a random-key flood ask billing once a second per source instead of
 * hundreds of times; 120 anonymous requests a minute lets a host sign up its agents (billing's
 * hourly sign-up cap still counts them) and retry claims, and keeps floods off billing.
 */
export const DEFAULT_SOURCE_LIMITS: SourceLimitsConfig = { authFailuresPerMinute: 60, anonymousPerMinute: 120 };

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

/** Default REQUEST_TIMEOUT_MS: five minutes is 100 MB at ~350 KB/s, the slowest upload we wait for. */
export const DEFAULT_REQUEST_TIMEOUT_MS = 300_000;

/** Default HEADERS_TIMEOUT_MS (raised above the keep-alive timeout when that is longer: httpServerTimeouts). */
export const DEFAULT_HEADERS_TIMEOUT_MS = 60_000;

/** Default KEEP_ALIVE_TIMEOUT_MS: above ingress-nginx's 60 s upstream keep-alive and most client pools'. */
export const DEFAULT_KEEP_ALIVE_TIMEOUT_MS = 65_000;

/** The HTTP server's timeouts in ms, as node:http names them. */
export interface HttpServerTimeouts {
  requestTimeout: number;
  headersTimeout: number;
  keepAliveTimeout: number;
}

/**
 * The HTTP server's timeouts from the config and defaults. An unset HEADERS_TIMEOUT_MS defaults
 * to above the keep-alive timeout (Node's guidance, so no Node version cuts a reused idle socket
 * on the headers timer); a set one is kept as given. node:http refuses a headers timeout above the
 * request timeout, so it is capped there.
 */
export function httpServerTimeouts(cfg: GatewayConfig): HttpServerTimeouts {
  const requestTimeout = cfg.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS;
  const keepAliveTimeout = cfg.keepAliveTimeoutMs ?? DEFAULT_KEEP_ALIVE_TIMEOUT_MS;
  const headers = cfg.headersTimeoutMs ?? Math.max(DEFAULT_HEADERS_TIMEOUT_MS, keepAliveTimeout + 1000);
  return { requestTimeout, headersTimeout: Math.min(headers, requestTimeout), keepAliveTimeout };
}

/** A full config from defaults plus `overrides` (tests and scripts). */
export function gatewayConfig(overrides: Partial<GatewayConfig> = {}): GatewayConfig {
  return { ...DEFAULTS, ...overrides, addrs: { ...DEFAULTS.addrs, ...overrides.addrs } };
}

type Env = Record<string, string | undefined>;

/**
 * RATE_LIMITS=off disables the limiter; RATE_LIMIT_<CLASS>_CAPACITY and
 * RATE_LIMIT_<CLASS>_WINDOW_S (CLASS = EXPENSIVE, WRITE, READ; integers >= 1) override
 * DEFAULT_RATE_LIMITS class by class.
 */
function rateLimitsFromEnv(env: Env): RateLimitsConfig | false {
  const mode = (env.RATE_LIMITS ?? "on").toLowerCase();
  if (mode === "off") return false;
  if (mode !== "on") throw new Error(`RATE_LIMITS must be on or off; got ${mode}`);
  return policiesFromEnv(env, "RATE_LIMIT", { ...DEFAULT_RATE_LIMITS });
}

/**
 * RATE_LIMIT_ACCOUNT_<CLASS>_CAPACITY and _WINDOW_S (integers >= 1) override, class by class,
 * accountLimitsFor(perKey); undefined with rate limits off.
 */
function accountRateLimitsFromEnv(env: Env, perKey: RateLimitsConfig | false): RateLimitsConfig | undefined {
  if (!perKey) return undefined;
  return policiesFromEnv(env, "RATE_LIMIT_ACCOUNT", accountLimitsFor(perKey));
}

/** `<prefix>_<CLASS>_CAPACITY` and `_WINDOW_S` (integers >= 1) over `limits`, class by class. */
function policiesFromEnv(env: Env, prefix: string, limits: RateLimitsConfig): RateLimitsConfig {
  const positive = (n: number) => Number.isInteger(n) && n >= 1;
  for (const cls of Object.keys(limits) as LimiterClass[]) {
    const name = `${prefix}_${cls.toUpperCase()}`;
    const capacity = numberVar(env, `${name}_CAPACITY`, positive, "an integer >= 1");
    const windowSeconds = numberVar(env, `${name}_WINDOW_S`, positive, "an integer >= 1");
    limits[cls] = {
      capacity: capacity ?? limits[cls].capacity,
      windowSeconds: windowSeconds ?? limits[cls].windowSeconds,
    };
  }
  return limits;
}

/** AUTH_FAILURES_PER_MINUTE and ANONYMOUS_REQUESTS_PER_MINUTE (integers >= 0; 0: off) over DEFAULT_SOURCE_LIMITS. */
function sourceLimitsFromEnv(env: Env): SourceLimitsConfig {
  const count = (n: number) => Number.isInteger(n) && n >= 0;
  const auth = numberVar(env, "AUTH_FAILURES_PER_MINUTE", count, "an integer >= 0");
  const anonymous = numberVar(env, "ANONYMOUS_REQUESTS_PER_MINUTE", count, "an integer >= 0");
  return {
    authFailuresPerMinute: auth ?? DEFAULT_SOURCE_LIMITS.authFailuresPerMinute,
    anonymousPerMinute: anonymous ?? DEFAULT_SOURCE_LIMITS.anonymousPerMinute,
  };
}

/**
 * TRUST_PROXY: unset, empty, "false" or 0 → undefined (no proxy trusted); an integer → that many
 * hops; else a comma-separated list of addresses, subnets and express's names, checked by
 * express itself. "true" (believe any X-Forwarded-For) is refused: a client could pick its address.
 */
function trustProxyFromEnv(env: Env): number | string | undefined {
  const raw = env.TRUST_PROXY?.trim() ?? "";
  if (raw === "" || raw.toLowerCase() === "false" || raw === "0") return undefined;
  if (raw.toLowerCase() === "true")
    throw new Error(
      "TRUST_PROXY=true would believe any client's X-Forwarded-For; give the hop count or the proxies' addresses",
    );
  if (/^\d+$/.test(raw)) return Number(raw);
  try {
    express().set("trust proxy", raw);
  } catch (err) {
    throw new Error(
      `TRUST_PROXY must be a hop count or proxy addresses/subnets; got ${raw} (${(err as Error).message})`,
    );
  }
  return raw;
}

/**
 * Reads PORT (default 8080), HOST (127.0.0.1), *_ADDR, MAX_REQUEST_MB (100), SUPPORT_EMAIL,
 * AI_TIMEOUT_MS (30 min), AUTH_CACHE_TTL_MS (5000), REQUEST_TIMEOUT_MS (300000),
 * HEADERS_TIMEOUT_MS (60000, or above the keep-alive) and KEEP_ALIVE_TIMEOUT_MS (65000), LOG_LEVEL (info), NATS_URL (job events),
 * the rate limits (rateLimitsFromEnv, accountRateLimitsFromEnv) and RATE_LIMIT_TIMEOUT_MS (500), the
 * per-source limits (sourceLimitsFromEnv), IDEMPOTENCY=off (Idempotency-Key ignored),
 * TRUST_PROXY (trustProxyFromEnv; unset: none), METRICS_ADDR (unset: metrics not served) and
 * PLAYGROUND_DIR (the built playground; unset: found beside the code).
 * Throws an Error naming the variable when a value is malformed or out of range.
 */
export function loadConfig(env: Env): GatewayConfig {
  const port = numberVar(env, "PORT", (n) => Number.isInteger(n) && n >= 0 && n <= 65535, "an integer 0..65535");
  const maxRequestMb = numberVar(env, "MAX_REQUEST_MB", (n) => n > 0, "a positive number");
  const aiTimeoutMs = numberVar(env, "AI_TIMEOUT_MS", (n) => Number.isInteger(n) && n > 0, "a positive integer");
  const authCacheTtlMs = numberVar(env, "AUTH_CACHE_TTL_MS", (n) => Number.isInteger(n) && n >= 0, "an integer >= 0");
  const positiveInt = (n: number) => Number.isInteger(n) && n > 0;
  const requestTimeoutMs = numberVar(env, "REQUEST_TIMEOUT_MS", positiveInt, "a positive integer");
  const headersTimeoutMs = numberVar(env, "HEADERS_TIMEOUT_MS", positiveInt, "a positive integer");
  const keepAliveTimeoutMs = numberVar(env, "KEEP_ALIVE_TIMEOUT_MS", positiveInt, "a positive integer");
  const rateLimitTimeoutMs = numberVar(env, "RATE_LIMIT_TIMEOUT_MS", positiveInt, "a positive integer");
  const trustProxy = trustProxyFromEnv(env);
  const rateLimits = rateLimitsFromEnv(env);
  const accountRateLimits = accountRateLimitsFromEnv(env, rateLimits);
  return gatewayConfig({
    host: env.HOST || DEFAULTS.host,
    addrs: readAddrs(env),
    logLevel: env.LOG_LEVEL || DEFAULTS.logLevel,
    tracing: readTracingEnv(env),
    supportEmail: env.SUPPORT_EMAIL || DEFAULTS.supportEmail,
    natsUrl: env.NATS_URL || undefined,
    rateLimits,
    ...(accountRateLimits && { accountRateLimits }),
    sourceLimits: sourceLimitsFromEnv(env),
    idempotency: (env.IDEMPOTENCY ?? "on").toLowerCase() !== "off",
    metricsAddr: readMetricsAddr(env),
    ...(env.PLAYGROUND_DIR && { playgroundDir: env.PLAYGROUND_DIR }),
    ...(port !== undefined && { port }),
    ...(maxRequestMb !== undefined && { maxRequestMb }),
    ...(aiTimeoutMs !== undefined && { aiTimeoutMs }),
    ...(authCacheTtlMs !== undefined && { authCacheTtlMs }),
    ...(requestTimeoutMs !== undefined && { requestTimeoutMs }),
    ...(headersTimeoutMs !== undefined && { headersTimeoutMs }),
    ...(keepAliveTimeoutMs !== undefined && { keepAliveTimeoutMs }),
    ...(rateLimitTimeoutMs !== undefined && { rateLimitTimeoutMs }),
    ...(trustProxy !== undefined && { trustProxy }),
  });
}

/** The body cap in bytes. */
export function maxRequestBytes(cfg: GatewayConfig): number {
  return Math.floor(cfg.maxRequestMb * 1024 * 1024);
}
