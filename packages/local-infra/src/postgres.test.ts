// Recovery of the embedded Postgres after its owner is killed with -9 (the supervisor case),
// with the owner simulated by a child node process (we cannot SIGKILL ourselves); as root, a
// cluster the "postgres" user cannot reach in place is relocated (postgres-placement.ts).
import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { existsSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import pg from "pg";
import { describe, expect, it } from "vitest";
import { startPostgres } from "./postgres.js";
import { postgresDataDir, removePostgresData } from "./postgres-placement.js";
import { canConnect, freePort, isAlive, processName, waitForExit } from "./proc.js";
import { testCleanups } from "./test-support.js";

const POSTGRES_TS = fileURLToPath(new URL("./postgres.ts", import.meta.url));

const { cleanups, tempDir } = testCleanups("redline-pgtest-");

async function query(url: string, sql: string): Promise<pg.QueryResultRow[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query(sql)).rows;
  } finally {
    await client.end();
  }
}

/** Starts a node child that runs startPostgres on dataDir/port and reports {url, pid} on stdout. */
async function startOwner(
  dir: string,
  dataDir: string,
  port: number,
  env: NodeJS.ProcessEnv,
): Promise<{ child: ChildProcess; url: string }> {
  const script = join(dir, "owner.mts");
  writeFileSync(
    script,
    `import { startPostgres } from ${JSON.stringify(POSTGRES_TS)};
const pg = await startPostgres({ dataDir: ${JSON.stringify(dataDir)}, port: ${port} });
console.log(JSON.stringify({ url: pg.url }));
setInterval(() => {}, 60_000);
`,
  );
  const child = spawn(process.execPath, ["--import", "tsx", script], {
    cwd: fileURLToPath(new URL("..", import.meta.url)),
    env: { ...process.env, ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  cleanups.push(() => {
    child.kill("SIGKILL");
  });
  let stderr = "";
  child.stderr?.on("data", (d: Buffer) => {
    stderr += d.toString();
  });
  const url = await new Promise<string>((resolve, reject) => {
    let out = "";
    child.stdout?.on("data", (d: Buffer) => {
      out += d.toString();
      const line = out.split("\n").find((l) => l.startsWith("{"));
      if (line) resolve((JSON.parse(line) as { url: string }).url);
    });
    child.once("exit", (code) => reject(new Error(`owner exited (${code}) before postgres was up:\n${stderr}`)));
  });
  return { child, url };
}

/** The pid in the postmaster.pid of `dataDir`'s cluster, wherever it lives. */
function postmasterPid(dataDir: string): number {
  return Number(readFileSync(join(postgresDataDir(dataDir), "postmaster.pid"), "utf8").split("\n")[0]);
}

describe("startPostgres after its owner was killed with -9", () => {
  for (const [title, tied, mode] of [
    ["orphaned postgres still running (no parent-death signal)", false, 0o755],
    ["postgres tied to the dead owner, restarted while it shuts down (default)", true, 0o755],
    ["orphaned postgres of a cluster relocated from a 0700 dir (as root)", false, 0o700],
  ] as const) {
    it.runIf(mode === 0o755 || process.getuid?.() === 0)(title, async () => {
      const env: NodeJS.ProcessEnv = tied ? {} : { REDLINE_NO_PDEATHSIG: "1" };
      const dir = tempDir(mode);
      const dataDir = join(dir, "postgres");
      cleanups.push(() => removePostgresData(dataDir));
      const port = await freePort();
      const owner = await startOwner(dir, dataDir, port, env);
      await query(owner.url, "create table survivor (v text); insert into survivor values ('still here')");
      const oldPid = postmasterPid(dataDir);
      expect(processName(oldPid)).toBe("postgres");

      owner.child.kill("SIGKILL");
      await new Promise((r) => owner.child.once("exit", r));
      if (!tied) {
        // Orphaned: nothing stops it, the port stays taken.
        expect(isAlive(oldPid)).toBe(true);
        expect(await canConnect(port)).toBe(true);
      }
      // Tied: it got SIGINT and is shutting down; we race that shutdown.

      // Same data dir, same fixed port: must stop/clean up the leftover and start fresh.
      const started = Date.now();
      const server = await startPostgres({ dataDir, port });
      cleanups.push(() => server.stop());
      expect(Date.now() - started).toBeLessThan(20_000);
      expect(isAlive(oldPid)).toBe(false);
      expect(postmasterPid(dataDir)).not.toBe(oldPid);
      expect(await query(server.url, "select v from survivor")).toEqual([{ v: "still here" }]);

      await server.stop();
      expect(await canConnect(port)).toBe(false);
    });
  }
});

/** The uid of the "postgres" system user (we are root). */
function postgresUid(): number {
  return Number(execFileSync("id", ["-u", "postgres"], { encoding: "utf8" }).trim());
}

describe("startPostgres", () => {
  it("ties postgres to its owner: kill -9 of the owner makes it shut down cleanly", async () => {
    const dir = tempDir();
    const dataDir = join(dir, "postgres");
    const owner = await startOwner(dir, dataDir, await freePort(), {});
    const pid = postmasterPid(dataDir);
    owner.child.kill("SIGKILL");
    expect(await waitForExit(pid, 10_000)).toBe(true);
    expect(() => readFileSync(join(dataDir, "postmaster.pid"))).toThrow(); // clean shutdown removes it
  });

  it("removes a stale postmaster.pid whose pid now belongs to another process", async () => {
    const dir = tempDir();
    const dataDir = join(dir, "postgres");
    const first = await startPostgres({ dataDir, persistent: true });
    await first.stop();
    // A pid file naming a live non-postgres process (pid reuse after a crash): our own pid.
    writeFileSync(
      join(dataDir, "postmaster.pid"),
      `${process.pid}\n${dataDir}\n0\n${first.port}\n\n127.0.0.1\n  0  0\nready\n`,
    );
    const second = await startPostgres({ dataDir });
    cleanups.push(() => second.stop());
    expect(await query(second.url, "select 1 as one")).toEqual([{ one: 1 }]);
  });

  it("picks a free port, and non-persistent stop deletes the data", async () => {
    const dir = tempDir();
    const dataDir = join(dir, "postgres");
    const server = await startPostgres({ dataDir, persistent: false, user: "alice", password: "p@ss:/word" });
    expect(server.url).toBe(`postgres://alice:p%40ss%3A%2Fword@127.0.0.1:${server.port}/postgres`);
    expect(await query(server.url, "select current_user as u")).toEqual([{ u: "alice" }]);
    const pid = postmasterPid(dataDir);
    await server.stop();
    expect(isAlive(pid)).toBe(false);
    expect(await waitForExit(pid, 1)).toBe(true);
    expect(() => readFileSync(join(dataDir, "PG_VERSION"))).toThrow();
  });

  it.runIf(process.getuid?.() === 0)(
    "as root, relocates a cluster under a 0700 dir, keeps it across restarts, and deletes it when not persistent",
    async () => {
      const dir = tempDir(0o700); // as mkdtemp leaves it: the postgres user cannot enter
      const dataDir = join(dir, "data", "postgres");
      const cluster = postgresDataDir(dataDir);
      expect(cluster).not.toBe(dataDir);
      cleanups.push(() => removePostgresData(dataDir));

      const first = await startPostgres({ dataDir });
      await query(first.url, "create table kept (v text); insert into kept values ('across restarts')");
      expect(postmasterPid(cluster)).toBeGreaterThan(0);
      const st = statSync(cluster);
      expect([st.uid, st.mode & 0o777]).toEqual([postgresUid(), 0o700]);
      expect(readFileSync(join(dirname(cluster), "origin"), "utf8")).toBe(`${dataDir}\n`);
      expect(existsSync(dataDir)).toBe(false); // nothing of the cluster inside the checkout
      expect(statSync(dir).mode & 0o777).toBe(0o700); // and its permissions untouched
      await first.stop();

      const second = await startPostgres({ dataDir, persistent: false });
      expect(await query(second.url, "select v from kept")).toEqual([{ v: "across restarts" }]);
      await second.stop();
      expect(existsSync(dirname(cluster))).toBe(false);
    },
  );

  it("fails clearly when an explicit port is taken", async () => {
    const dir = tempDir();
    const other = await startPostgres({ dataDir: join(dir, "a"), persistent: false });
    cleanups.push(() => other.stop());
    await expect(startPostgres({ dataDir: join(dir, "b"), port: other.port })).rejects.toThrow(
      `port ${other.port} on 127.0.0.1 is already in use`,
    );
  });
});
