// Embedded S3: @20minutes/s3rver 4 in a child node process, objects stored as files under dataDir.
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import {
  assertOrphaned,
  childExited,
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
  /** Access key (default "S3RVER", which s3rver always accepts with secret "S3RVER"). */
  accessKey?: string;
  /** Secret key (default "S3RVER"); signatures (v2/v4) are verified against it. */
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

/**
 * Starts an S3-compatible server (s3rver) on 127.0.0.1 in a child node process tied to this one
 * (it gets SIGTERM when this process exits or dies). The bucket is created when missing.
 * Signed requests must use accessKey/secretKey (v4 with any region: use us-east-1, path-style).
 * Unsigned requests are accepted too: a local development server, never expose it.
 * Errors: port in use (explicit port), startup failure or 20 s timeout (with its output).
 */
export async function startS3(opts: StartS3Options): Promise<EmbeddedS3Handle> {
  const directory = resolve(opts.dataDir);
  const accessKey = opts.accessKey ?? "S3RVER";
  const secretKey = opts.secretKey ?? "S3RVER";
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
  const child = spawnTied(
    process.execPath,
    [RUNNER, JSON.stringify({ port, directory, accessKey, secretKey, bucket })],
    {
      cwd: directory,
      // Plain node: no tsx loader inherited through NODE_OPTIONS (see s3rver-main.cjs).
      env: { ...process.env, NODE_OPTIONS: "" },
      stdio: ["ignore", "pipe", "pipe"],
      detached: true,
      deathSignal: "SIGTERM",
    },
  );
  if (child.pid !== undefined) writeFileSync(pidFile, `${child.pid}\n`);
  const recent: string[] = [];
  let onReady: (port: number) => void = () => {};
  forEachLine(child.stdout, (line) => {
    const ready = /^READY (\d+)$/.exec(line);
    if (ready) onReady(Number(ready[1]));
    else log(line);
  });
  forEachLine(child.stderr, (line) => {
    recent.push(line);
    if (recent.length > 30) recent.shift();
    log(line);
  });

  let actualPort: number;
  try {
    actualPort = await new Promise<number>((resolveReady, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`embedded S3 (s3rver) did not start within 20 s:\n${recent.join("\n")}`)),
        20_000,
      );
      onReady = (p) => {
        clearTimeout(timer);
        resolveReady(p);
      };
      child.once("error", (err) => {
        clearTimeout(timer);
        reject(new Error(`could not spawn the s3rver process: ${err.message}`));
      });
      child.once("exit", (code, sig) => {
        clearTimeout(timer);
        setTimeout(
          () =>
            reject(
              new Error(
                `embedded S3 (s3rver) exited during startup (code ${code}, signal ${sig}):\n${recent.join("\n")}`,
              ),
            ),
          50,
        );
      });
    });
  } catch (err) {
    child.kill("SIGKILL");
    rmSync(pidFile, { force: true });
    throw err;
  }
  child.unref();
  (child.stdout as unknown as { unref?: () => void } | null)?.unref?.();
  (child.stderr as unknown as { unref?: () => void } | null)?.unref?.();
  log(`s3rver listening on http://127.0.0.1:${actualPort} (bucket ${bucket}, data in ${directory})`);

  let stopping: Promise<void> | undefined;
  child.once("exit", (code, sig) => {
    if (!stopping) log(`s3rver exited unexpectedly (code ${code}, signal ${sig})`);
  });
  return {
    endpoint: `http://127.0.0.1:${actualPort}`,
    port: actualPort,
    accessKey,
    secretKey,
    bucket,
    stop() {
      stopping ??= (async () => {
        if (child.exitCode === null && child.signalCode === null && child.pid !== undefined) {
          const exited = childExited(child);
          await terminate(child.pid, "SIGTERM", 5_000);
          await exited;
        }
        rmSync(pidFile, { force: true });
      })();
      return stopping;
    },
  };
}
