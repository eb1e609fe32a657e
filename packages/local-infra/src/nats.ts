// Embedded NATS with JetStream: the nats-server binary from apt (no npm package ships it).
import type { ChildProcess } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import {
  assertOrphaned,
  canConnect,
  detachServer,
  findExecutable,
  forEachLine,
  freePort,
  isAlive,
  isPortFree,
  type LogFn,
  processName,
  spawnTied,
  terminate,
} from "./proc.js";

export interface StartNatsOptions {
  /** JetStream store goes to <dataDir>/jetstream; the pid file to <dataDir>/nats-server.pid. */
  dataDir: string;
  /** TCP port on 127.0.0.1; 0 or undefined picks a free one. */
  port?: number;
  /** Receives nats-server's log lines. */
  log?: LogFn;
}

export interface EmbeddedNatsHandle {
  /** nats://127.0.0.1:port */
  url: string;
  port: number;
  /** SIGTERM (graceful), SIGKILL after 10 s. Idempotent. */
  stop(): Promise<void>;
}

const MISSING = "nats-server not found: run `apt-get install -y nats-server` or set NATS_URL";

/** Path of the nats-server binary: $NATS_SERVER_BIN, else PATH, /usr/sbin, /usr/local/bin. Throws MISSING. */
export function natsServerBinary(): string {
  const fromEnv = process.env.NATS_SERVER_BIN;
  if (fromEnv) {
    if (!existsSync(fromEnv)) throw new Error(`${MISSING} (NATS_SERVER_BIN=${fromEnv} does not exist)`);
    return fromEnv;
  }
  const found = findExecutable("nats-server", ["/usr/sbin", "/usr/local/sbin", "/usr/local/bin", "/usr/bin"]);
  if (!found) throw new Error(MISSING);
  return found;
}

/** Stops a nats-server left running by a previous owner killed with -9 (found through our pid file). */
export async function clearStaleNats(dataDir: string, log: LogFn = () => {}): Promise<void> {
  const pidFile = join(resolve(dataDir), "nats-server.pid");
  if (!existsSync(pidFile)) return;
  const pid = Number(readFileSync(pidFile, "utf8").trim());
  if (isAlive(pid) && processName(pid) === "nats-server") {
    assertOrphaned(pid, `embedded nats-server for ${dataDir}`);
    log(`nats-server (pid ${pid}) from a previous run is still running: stopping it`);
    await terminate(pid, "SIGTERM", 10_000);
  }
  rmSync(pidFile, { force: true });
}

/**
 * Starts nats-server with JetStream on 127.0.0.1 and resolves once it logs "Server is ready"
 * and accepts connections. The server is tied to this process (SIGTERM when it exits or dies);
 * a server orphaned by an earlier kill -9 is stopped first. Errors: binary missing (MISSING
 * message), port in use (explicit port), early exit or 20 s startup timeout (with its log).
 */
export async function startNats(opts: StartNatsOptions): Promise<EmbeddedNatsHandle> {
  const dataDir = resolve(opts.dataDir);
  const log = opts.log ?? (() => {});
  const bin = natsServerBinary();
  mkdirSync(join(dataDir, "jetstream"), { recursive: true });
  const pidFile = join(dataDir, "nats-server.pid");
  await clearStaleNats(dataDir, log);

  const fixedPort = opts.port !== undefined && opts.port !== 0;
  if (fixedPort && !(await isPortFree(opts.port as number))) {
    throw new Error(
      `cannot start embedded NATS: port ${opts.port} on 127.0.0.1 is already in use by another process (free it, or set NATS_URL to use an external NATS)`,
    );
  }
  for (let attempt = 1; ; attempt++) {
    const port = fixedPort ? (opts.port as number) : await freePort();
    try {
      return await launch(bin, dataDir, pidFile, port, log);
    } catch (err) {
      if (!fixedPort && attempt < 4 && /address already in use/i.test((err as Error).message)) continue;
      throw err;
    }
  }
}

/**
 * Streams nats-server's output to `log` and resolves at its "Server is ready" line; rejects, with
 * the last lines, on a spawn error, an exit during startup or after 20 s.
 */
function natsReady(child: ChildProcess, bin: string, log: LogFn): Promise<void> {
  const recent: string[] = [];
  return new Promise<void>((resolveReady, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`nats-server did not become ready within 20 s:\n${recent.join("\n")}`)),
      20_000,
    );
    const handleLine = (line: string) => {
      recent.push(line);
      if (recent.length > 30) recent.shift();
      log(line);
      if (!line.includes("Server is ready")) return;
      clearTimeout(timer);
      resolveReady();
    };
    forEachLine(child.stdout, handleLine);
    forEachLine(child.stderr, handleLine);
    child.once("error", (err) => {
      clearTimeout(timer);
      reject(new Error(`could not spawn nats-server (${bin}): ${err.message}`));
    });
    child.once("exit", (code, sig) => {
      clearTimeout(timer);
      const detail = `(code ${code}, signal ${sig}):\n${recent.join("\n")}`;
      setTimeout(() => reject(new Error(`nats-server exited during startup ${detail}`)), 50);
    });
  });
}

async function launch(
  bin: string,
  dataDir: string,
  pidFile: string,
  port: number,
  log: LogFn,
): Promise<EmbeddedNatsHandle> {
  const child = spawnTied(bin, ["-js", "-sd", join(dataDir, "jetstream"), "-a", "127.0.0.1", "-p", String(port)], {
    cwd: dataDir,
    stdio: ["ignore", "pipe", "pipe"],
    detached: true,
    deathSignal: "SIGTERM",
  });
  if (child.pid !== undefined) writeFileSync(pidFile, `${child.pid}\n`);
  try {
    await natsReady(child, bin, log);
    const deadline = Date.now() + 5_000;
    while (!(await canConnect(port))) {
      if (Date.now() > deadline)
        throw new Error(`nats-server says it is ready but port ${port} does not accept connections`);
      await new Promise((r) => setTimeout(r, 50));
    }
  } catch (err) {
    child.kill("SIGKILL");
    rmSync(pidFile, { force: true });
    throw err;
  }

  const stop = detachServer(child, log, { name: "nats-server", signal: "SIGTERM", graceMs: 10_000 }, () => {
    rmSync(pidFile, { force: true });
  });
  return {
    url: `nats://127.0.0.1:${port}`,
    port,
    stop,
  };
}
