// Shared pieces of configuration. Only service main.ts files and scripts call these with
// process.env; libraries receive typed config objects.
import type { S3Config } from "./object-store.js";

/** Addresses (host:port) of the five gRPC services. */
export interface ServiceAddrs {
  documents: string;
  sessions: string;
  agent: string;
  billing: string;
  ingest: string;
}

/** Default addresses of the local stack (pnpm start): below the source-port range, as local-infra's DEFAULT_PORTS. */
export const DEFAULT_ADDRS: ServiceAddrs = {
  documents: "127.0.0.1:8061",
  sessions: "127.0.0.1:8062",
  agent: "127.0.0.1:8063",
  billing: "127.0.0.1:8064",
  ingest: "127.0.0.1:8065",
};

/** Infrastructure every service may use. */
export interface InfraConfig {
  databaseUrl: string;
  natsUrl: string;
  s3: S3Config;
}

type Env = Record<string, string | undefined>;

/**
 * A number from `env[name]`; undefined when unset or blank. Throws an Error naming the variable
 * and `rule` (e.g. "a positive integer") when it is not a number or fails `check`.
 */
export function numberFromEnv(env: Env, name: string, check: (n: number) => boolean, rule: string): number | undefined {
  const raw = env[name];
  if (raw === undefined || raw.trim() === "") return undefined;
  const n = Number(raw);
  if (!Number.isFinite(n) || !check(n)) throw new Error(`${name} must be ${rule}, got "${raw}"`);
  return n;
}

/** `env[name]`; throws an Error naming the variable when it is unset or empty. */
export function requireEnv(env: Env, name: string): string {
  const v = env[name];
  if (!v) throw new Error(`${name} is not set (pnpm start sets it; see docs/configuration.md)`);
  return v;
}

/** Reads DATABASE_URL, NATS_URL and S3_* (all required); throws naming the missing one. */
export function readInfraEnv(env: Env): InfraConfig {
  return {
    databaseUrl: requireEnv(env, "DATABASE_URL"),
    natsUrl: requireEnv(env, "NATS_URL"),
    s3: {
      endpoint: requireEnv(env, "S3_ENDPOINT"),
      accessKey: env.S3_ACCESS_KEY ?? "S3RVER",
      secretKey: env.S3_SECRET_KEY ?? "S3RVER",
      bucket: env.S3_BUCKET ?? "redline",
      region: env.S3_REGION ?? "us-east-1",
    },
  };
}

/** Reads *_ADDR overrides over the defaults. */
export function readAddrs(env: Env): ServiceAddrs {
  return {
    documents: env.DOCUMENTS_ADDR || DEFAULT_ADDRS.documents,
    sessions: env.SESSIONS_ADDR || DEFAULT_ADDRS.sessions,
    agent: env.AGENT_ADDR || DEFAULT_ADDRS.agent,
    billing: env.BILLING_ADDR || DEFAULT_ADDRS.billing,
    ingest: env.INGEST_ADDR || DEFAULT_ADDRS.ingest,
  };
}

/**
 * Where a backend binds its gRPC server: LISTEN_ADDR when set (e.g. 0.0.0.0:8061 in a
 * container), else its own *_ADDR, the address its callers dial (local stack: 127.0.0.1:806x).
 */
export function listenAddr(env: Env, service: keyof ServiceAddrs): string {
  return env.LISTEN_ADDR?.trim() || readAddrs(env)[service];
}
