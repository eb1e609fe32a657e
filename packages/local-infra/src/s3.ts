// Embedded S3: @20minutes/s3rver 4 in a child node process, objects stored as files under dataDir.
// Only signed requests are served, with credentials generated per data dir (s3rver-main.cjs).
import type { ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import {
  assertOrphaned,
  detachServer,
  forEachLine,
  isAlive,
  isPortFree,
  type LogFn,
  processArgs,
  spawnTied,
  terminate,
} from "./proc.js";

export interface StartS3Options {
  /** Buckets are directories under dataDir; the server's pid file is <dataDir>/.s3rver.pid. */
  dataDir: string;
  /** TCP port on 127.0.0.1; 0 or undefined picks a free one. */
  port?: number;
  /**
   * Access key; with secretKey, replaces the generated pair of the data dir (see
   * s3Credentials). s3rver's public default S3RVER/S3RVER is refused.
   */
  accessKey?: string;
  /** Secret key; signatures (v2/v4) are verified against it. */
  secretKey?: string;
  /** Bucket created at startup when missing (default "redline"). */
  bucket?: string;
  log?: LogFn;
}

export interface EmbeddedS3Handle {
  /** http://127.0.0.1:port (path-style addressing; region us-east-1). */
  endpoint: string;
  port: number;
  accessKey: string;
  secretKey: string;
  bucket: string;
  /** SIGTERM, SIGKILL after 5 s; objects stay on disk. Idempotent. */
  stop(): Promise<void>;
}

const RUNNER = fileURLToPath(new URL("./s3rver-main.cjs", import.meta.url));
const PID_FILE = ".s3rver.pid";
/** Generated credentials of a data dir; a file at the top is not a bucket, so S3 never serves it. */
const CREDENTIALS_FILE = ".credentials.json";
/** s3rver's built-in key pair: public knowledge, so never accepted by the embedded store. */
const PUBLIC_DEFAULT_KEY = "S3RVER";

/** An access key / secret key pair. */
export interface S3Credentials {
  accessKey: string;
  secretKey: string;
}

/**
 * The embedded store's credentials for `dataDir`: read from <dataDir>/.credentials.json, or
 * generated (20-character access key, 40-character secret, from the CSPRNG) and written there with
 * mode 0600 on first use, so a restart of `pnpm start` keeps the links and clients it signed.
 * Errors: an unreadable or malformed credentials file (delete it to get a new pair).
 */
export function s3Credentials(dataDir: string): S3Credentials {
  const directory = resolve(dataDir);
  const file = join(directory, CREDENTIALS_FILE);
  if (!existsSync(file)) {
    mkdirSync(directory, { recursive: true });
    const fresh: S3Credentials = {
      accessKey: `RL${randomBytes(12).toString("hex").toUpperCase().slice(0, 18)}`,
      secretKey: randomBytes(30).toString("base64url"),
    };
    try {
      // wx: a concurrent first start keeps whichever pair was written first.
      writeFileSync(file, `${JSON.stringify(fresh)}\n`, { mode: 0o600, flag: "wx" });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
    }
  }
  let parsed: Partial<S3Credentials>;
  try {
    parsed = JSON.parse(readFileSync(file, "utf8")) as Partial<S3Credentials>;
  } catch (err) {
    throw new Error(
      `cannot read the embedded S3 credentials ${file} (${(err as Error).message}): delete it to generate new ones`,
    );
  }
  if (
    typeof parsed.accessKey !== "string" ||
    !parsed.accessKey ||
    typeof parsed.secretKey !== "string" ||
    !parsed.secretKey
  )
    throw new Error(`${file} lacks accessKey/secretKey: delete it to generate new ones`);
  return { accessKey: parsed.accessKey, secretKey: parsed.secretKey };
}

/** Stops an s3rver process that a dead owner (kill -9) left running on dataDir. */
export async function clearStaleS3(dataDir: string, log: LogFn = () => {}): Promise<void> {
  const pidFile = join(resolve(dataDir), PID_FILE);
  if (!existsSync(pidFile)) return;
  const pid = Number(readFileSync(pidFile, "utf8").trim());
  if (isAlive(pid) && (processArgs(pid) ?? []).some((arg) => arg.endsWith("s3rver-main.cjs"))) {
    assertOrphaned(pid, `embedded s3rver for ${dataDir}`);
    log(`s3rver (pid ${pid}) from a previous run is still running: stopping it`);
    await terminate(pid, "SIGTERM", 5_000);
  }
  rmSync(pidFile, { force: true });
}

/** The pair to serve with: both given, or the data dir's generated pair. Throws for half a pair or the public default. */
function credentialsFor(opts: StartS3Options, directory: string): S3Credentials {
  if (!opts.accessKey !== !opts.secretKey)
    throw new Error(
      "embedded S3: set both S3_ACCESS_KEY and S3_SECRET_KEY, or neither (then a generated pair is used)",
    );
  if (opts.accessKey === PUBLIC_DEFAULT_KEY || opts.secretKey === PUBLIC_DEFAULT_KEY)
    throw new Error(
      "embedded S3: S3RVER/S3RVER is s3rver's public default key pair and is refused; unset S3_ACCESS_KEY and S3_SECRET_KEY to use the generated pair",
    );
  return opts.accessKey && opts.secretKey
    ? { accessKey: opts.accessKey, secretKey: opts.secretKey }
    : s3Credentials(directory);
}

/**
 * Streams s3rver's output to `log` and resolves with the port of its READY line; rejects, with
 * the last stderr lines, on a spawn error, an exit during startup or after 20 s.
 */
function s3rverReady(child: ChildProcess, log: LogFn): Promise<number> {
  const recent: string[] = [];
  return new Promise<number>((resolveReady, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`embedded S3 (s3rver) did not start within 20 s:\n${recent.join("\n")}`)),
      20_000,
    );
    forEachLine(child.stdout, (line) => {
      const ready = /^READY (\d+)$/.exec(line);
      if (!ready) return log(line);
      clearTimeout(timer);
      resolveReady(Number(ready[1]));
    });
    forEachLine(child.stderr, (line) => {
      recent.push(line);
      if (recent.length > 30) recent.shift();
      log(line);
    });
    child.once("error", (err) => {
      clearTimeout(timer);
      reject(new Error(`could not spawn the s3rver process: ${err.message}`));
    });
    child.once("exit", (code, sig) => {
      clearTimeout(timer);
      const detail = `(code ${code}, signal ${sig}):\n${recent.join("\n")}`;
      setTimeout(() => reject(new Error(`embedded S3 (s3rver) exited during startup ${detail}`)), 50);
    });
  });
}

/**
 * Starts an S3-compatible server (s3rver) on 127.0.0.1 in a child node process tied to this one
 * (it gets SIGTERM when this process exits or dies). The bucket is created when missing.
 * Requests must be signed with accessKey/secretKey (v4 with any region: use us-east-1,
 * path-style), in a header or as a pre-signed URL; anything unsigned or badly signed gets a 403
 * AccessDenied XML body. Object responses carry `Content-Security-Policy: default-src 'none';
 * sandbox`, `X-Content-Type-Options: nosniff` and, unless the signed URL overrides it,
 * `Content-Disposition: attachment`. Without opts.accessKey/secretKey the data dir's generated
 * pair is used (s3Credentials).
 * Errors: only one of accessKey/secretKey given, or the public S3RVER default; port in use
 * (explicit port), startup failure or 20 s timeout (with its output).
 */
export async function startS3(opts: StartS3Options): Promise<EmbeddedS3Handle> {
  const directory = resolve(opts.dataDir);
  const { accessKey, secretKey } = credentialsFor(opts, directory);
  const bucket = opts.bucket ?? "redline";
  const log = opts.log ?? (() => {});
  mkdirSync(directory, { recursive: true });
  const pidFile = join(directory, PID_FILE);
  await clearStaleS3(directory, log);

  const port = opts.port ?? 0;
  if (port !== 0 && !(await isPortFree(port))) {
    throw new Error(
      `cannot start embedded S3: port ${port} on 127.0.0.1 is already in use by another process (free it, or set S3_ENDPOINT to use an external S3)`,
    );
  }
  const child = spawnTied(process.execPath, [RUNNER], {
    cwd: directory,
    // Plain node: no tsx loader inherited through NODE_OPTIONS (see s3rver-main.cjs). The
    // config travels in the environment: argv (with the secret) is readable by every local user.
    env: {
      ...process.env,
      NODE_OPTIONS: "",
      REDLINE_S3RVER_CONFIG: JSON.stringify({ port, directory, accessKey, secretKey, bucket }),
    },
    stdio: ["ignore", "pipe", "pipe"],
    detached: true,
    deathSignal: "SIGTERM",
  });
  if (child.pid !== undefined) writeFileSync(pidFile, `${child.pid}\n`);
  let actualPort: number;
  try {
    actualPort = await s3rverReady(child, log);
  } catch (err) {
    child.kill("SIGKILL");
    rmSync(pidFile, { force: true });
    throw err;
  }
  log(`s3rver listening on http://127.0.0.1:${actualPort} (bucket ${bucket}, data in ${directory})`);
  const stop = detachServer(child, log, { name: "s3rver", signal: "SIGTERM", graceMs: 5_000 }, () => {
    rmSync(pidFile, { force: true });
  });
  return {
    endpoint: `http://127.0.0.1:${actualPort}`,
    port: actualPort,
    accessKey,
    secretKey,
    bucket,
    stop,
  };
}
