// Recovery of the embedded Postgres after its owner is killed with -9 (the supervisor case),
// with the owner simulated by a child node process (we cannot SIGKILL ourselves).
import { type ChildProcess, spawn } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import pg from "pg";
import { describe, expect, it } from "vitest";
import { startPostgres } from "./postgres.js";
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

function postmasterPid(dataDir: string): number {
  return Number(readFileSync(join(dataDir, "postmaster.pid"), "utf8").split("\n")[0]);
}

describe("startPostgres after its owner was killed with -9", () => {
  for (const [title, tied] of [
    ["orphaned postgres still running (no parent-death signal)", false],
    ["postgres tied to the dead owner, restarted while it shuts down (default)", true],
  ] as const) {
    it(title, async () => {
      const env: NodeJS.ProcessEnv = tied ? {} : { REDLINE_NO_PDEATHSIG: "1" };
      const dir = tempDir();
      const dataDir = join(dir, "postgres");
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

  it("fails clearly when an explicit port is taken", async () => {
    const dir = tempDir();
    const other = await startPostgres({ dataDir: join(dir, "a"), persistent: false });
    cleanups.push(() => other.stop());
    await expect(startPostgres({ dataDir: join(dir, "b"), port: other.port })).rejects.toThrow(
      `port ${other.port} on 127.0.0.1 is already in use`,
    );
  });
});
