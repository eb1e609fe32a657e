// The whole local infrastructure (Postgres, NATS, S3), each piece replaceable by an external one.
import { rmSync } from "node:fs";
import { join, resolve } from "node:path";
import { clearStaleNats, startNats } from "./nats.js";
import { clearStalePostmaster, startPostgres } from "./postgres.js";
import type { LogFn } from "./proc.js";
import { clearStaleS3, startS3 } from "./s3.js";

/**
 * Ports of the persistent local stack (pnpm start): stable URLs across restarts. Below the
 * kernel's source-port range (32768 up): a port in it can be left in TIME_WAIT by an outgoing
 * loopback connection that drew it, and then nothing can listen there for a minute.
 */
export const DEFAULT_PORTS = { postgres: 8432, nats: 8422, s3: 8439 } as const;

/** S3 settings in the shape services read from S3_* variables. */
export interface S3Settings {
  /** e.g. http://127.0.0.1:8439 */
  endpoint: string;
  accessKey: string;
  secretKey: string;
  bucket: string;
  region: string;
}

export interface LocalInfra {
  /** postgres://… admin database of the cluster (or $DATABASE_URL). */
  databaseUrl: string;
  /** nats://127.0.0.1:port (or $NATS_URL). */
  natsUrl: string;
  s3: S3Settings;
  /** Which pieces run embedded (false: taken from the environment). */
  embedded: { postgres: boolean; nats: boolean; s3: boolean };
  /** Stops the embedded pieces (in parallel). Idempotent. */
  stop(): Promise<void>;
}

export interface StartLocalInfraOptions {
  /** Embedded data lives in <dataDir>/postgres, <dataDir>/nats and <dataDir>/s3. */
  dataDir: string;
  /**
   * DATABASE_URL, NATS_URL, S3_ENDPOINT (+ S3_ACCESS_KEY, S3_SECRET_KEY, S3_BUCKET, S3_REGION)
   * replace embedded pieces, used as given. REDLINE_POSTGRES_PORT, REDLINE_NATS_PORT and
   * REDLINE_S3_PORT (0 = a free one) replace the embedded pieces' ports implied by `persistent`. Without S3_ENDPOINT, S3_ACCESS_KEY and S3_SECRET_KEY
   * (both or neither) set the embedded store's keys; unset, it uses the pair generated for
   * <dataDir>/s3. Default process.env.
   */
  env?: NodeJS.ProcessEnv;
  /**
   * true (default): the fixed DEFAULT_PORTS and durable data. false: random free ports, fsync
   * off, and the embedded data deleted on stop (tests).
   */
  persistent?: boolean;
  /** Explicit ports (0 = random), overriding the environment and the choice implied by `persistent`. */
  ports?: { postgres?: number; nats?: number; s3?: number };
  /** Receives log lines, prefixed with "[postgres] ", "[nats] " or "[s3] ". */
  log?: LogFn;
}

const PORT_VARIABLES = {
  postgres: "REDLINE_POSTGRES_PORT",
  nats: "REDLINE_NATS_PORT",
  s3: "REDLINE_S3_PORT",
} as const satisfies Record<keyof typeof DEFAULT_PORTS, string>;

/** The port REDLINE_<NAME>_PORT asks for; undefined when unset. Throws for a value that is not 0..65535. */
function portFromEnv(env: NodeJS.ProcessEnv, name: keyof typeof DEFAULT_PORTS): number | undefined {
  const variable = PORT_VARIABLES[name];
  const value = env[variable];
  if (value === undefined || value === "") return undefined;
  const port = Number(value);
  if (!/^\d+$/.test(value) || port > 65535) throw new Error(`${variable}=${value} is not a port number (0..65535)`);
  return port;
}

/** S3_ENDPOINT and its S3_* companions as settings; undefined when S3_ENDPOINT is unset. */
function s3FromEnv(env: NodeJS.ProcessEnv): S3Settings | undefined {
  return env.S3_ENDPOINT
    ? {
        endpoint: env.S3_ENDPOINT,
        accessKey: env.S3_ACCESS_KEY || "S3RVER",
        secretKey: env.S3_SECRET_KEY || "S3RVER",
        bucket: env.S3_BUCKET || "redline",
        region: env.S3_REGION || "us-east-1",
      }
    : undefined;
}

/**
 * An idempotent stop of the started pieces; then, given `throwawayDir`, deletes their data
 * under it. Throws one Error naming every piece that failed to stop.
 */
function stopAll(started: { stop(): Promise<void> }[], throwawayDir: string | undefined): () => Promise<void> {
  let stopping: Promise<void> | undefined;
  return () => {
    stopping ??= (async () => {
      const results = await Promise.allSettled(started.map((piece) => piece.stop()));
      if (throwawayDir) {
        for (const sub of ["postgres", "nats", "s3"]) rmSync(join(throwawayDir, sub), { recursive: true, force: true });
      }
      const failed = results.flatMap((r) =>
        r.status === "rejected" ? [String((r.reason as Error)?.message ?? r.reason)] : [],
      );
      if (failed.length) throw new Error(`stopping local infra failed: ${failed.join("; ")}`);
    })();
    return stopping;
  };
}

/**
 * Starts embedded Postgres, NATS (JetStream) and S3 in parallel, except those the environment
 * points elsewhere. If one fails, the others are stopped and the error (naming every failed
 * piece) is thrown.
 */
export async function startLocalInfra(opts: StartLocalInfraOptions): Promise<LocalInfra> {
  const dataDir = resolve(opts.dataDir);
  const env = opts.env ?? process.env;
  const persistent = opts.persistent ?? true;
  const log = opts.log ?? (() => {});
  // All read before anything starts: a bad variable must not leave a server half started.
  const ports = Object.fromEntries(
    (Object.keys(DEFAULT_PORTS) as (keyof typeof DEFAULT_PORTS)[]).map((name) => [
      name,
      opts.ports?.[name] ?? portFromEnv(env, name) ?? (persistent ? DEFAULT_PORTS[name] : 0),
    ]),
  ) as Record<keyof typeof DEFAULT_PORTS, number>;
  const port = (name: keyof typeof DEFAULT_PORTS) => ports[name];
  const prefixed =
    (name: string): LogFn =>
    (line) =>
      log(`[${name}] ${line}`);

  const s3Env = s3FromEnv(env);

  const [pgResult, natsResult, s3Result] = await Promise.allSettled([
    env.DATABASE_URL
      ? undefined
      : startPostgres({
          dataDir: join(dataDir, "postgres"),
          port: port("postgres"),
          persistent,
          log: prefixed("postgres"),
        }),
    env.NATS_URL ? undefined : startNats({ dataDir: join(dataDir, "nats"), port: port("nats"), log: prefixed("nats") }),
    s3Env
      ? undefined
      : startS3({
          dataDir: join(dataDir, "s3"),
          port: port("s3"),
          accessKey: env.S3_ACCESS_KEY || undefined,
          secretKey: env.S3_SECRET_KEY || undefined,
          bucket: env.S3_BUCKET || undefined,
          log: prefixed("s3"),
        }),
  ]);

  const started = [pgResult, natsResult, s3Result].flatMap((r) =>
    r.status === "fulfilled" && r.value ? [r.value] : [],
  );
  const stop = stopAll(started, persistent ? undefined : dataDir);

  const failures = (
    [
      ["postgres", pgResult],
      ["nats", natsResult],
      ["s3", s3Result],
    ] as const
  ).flatMap(([name, r]) =>
    r.status === "rejected" ? [`${name}: ${(r.reason as Error)?.message ?? String(r.reason)}`] : [],
  );
  if (failures.length) {
    await stop().catch(() => {});
    throw new Error(`local infra failed to start:\n${failures.join("\n")}`);
  }

  const pg = pgResult.status === "fulfilled" ? pgResult.value : undefined;
  const nats = natsResult.status === "fulfilled" ? natsResult.value : undefined;
  const s3 = s3Result.status === "fulfilled" ? s3Result.value : undefined;
  return {
    databaseUrl: pg?.url ?? (env.DATABASE_URL as string),
    natsUrl: nats?.url ?? (env.NATS_URL as string),
    s3: s3
      ? {
          endpoint: s3.endpoint,
          accessKey: s3.accessKey,
          secretKey: s3.secretKey,
          bucket: s3.bucket,
          region: "us-east-1",
        }
      : (s3Env as S3Settings),
    embedded: { postgres: !!pg, nats: !!nats, s3: !!s3 },
    stop,
  };
}

/** The S3_*, DATABASE_URL and NATS_URL variables that point a service at `infra`. */
export function infraEnv(infra: Pick<LocalInfra, "databaseUrl" | "natsUrl" | "s3">): Record<string, string> {
  return {
    DATABASE_URL: infra.databaseUrl,
    NATS_URL: infra.natsUrl,
    S3_ENDPOINT: infra.s3.endpoint,
    S3_ACCESS_KEY: infra.s3.accessKey,
    S3_SECRET_KEY: infra.s3.secretKey,
    S3_BUCKET: infra.s3.bucket,
    S3_REGION: infra.s3.region,
  };
}

/**
 * Stops embedded servers that a dead owner (kill -9) left running on `dataDir` (postgres via its
 * postmaster.pid, nats-server and s3rver via our pid files). startLocalInfra does this itself; use this to
 * clean up a data directory you are about to delete.
 */
export async function stopOrphanedInfra(dataDir: string, log: LogFn = () => {}): Promise<void> {
  const dir = resolve(dataDir);
  await Promise.all([
    clearStalePostmaster(join(dir, "postgres"), log),
    clearStaleNats(join(dir, "nats"), log),
    clearStaleS3(join(dir, "s3"), log),
  ]);
}
