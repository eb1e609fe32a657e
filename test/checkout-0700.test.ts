// A fresh clone under a 0700 directory (what `mktemp -d` makes; root's home on Debian) works as
// root, with nothing beside it and no permission changed: offline install, codegen, the main job
// (`pnpm demo`) and one system test file through vitest. Postgres runs as the "postgres" user
// there, so its binaries are staged and the demo's cluster is relocated (local-infra,
// postgres-placement.ts). The clone is of HEAD: commit before running this test.
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import os from "node:os";
import { join } from "node:path";
import {
  freePort,
  postgresDataDir,
  removePostgresData,
  STAGE_ROOT,
  STATE_ROOT,
  stopOrphanedInfra,
} from "@redline/local-infra";
import { afterAll, describe, expect, it } from "vitest";
import { REPO_ROOT } from "./support/fixtures.js";

const asRoot = process.getuid?.() === 0;
/** The directory that stands for root's home: made by mkdtemp, mode 0700, never chmod'ed. */
const home = mkdtempSync(join(os.tmpdir(), "redline-0700-"));
const checkout = join(home, "redline");
const dataDir = join(checkout, ".redline");
const timings: string[] = [];

afterAll(async () => {
  // The demo stops its stack; after a failure mid-run, stop what a killed run may have left.
  await stopOrphanedInfra(dataDir).catch(() => {});
  removePostgresData(join(dataDir, "postgres"));
  rmSync(home, { recursive: true, force: true });
  console.log(`checkout-0700 timings: ${timings.join(", ")}`);
});

interface Run {
  code: number | null;
  output: string;
}

/**
 * Runs a command (in the checkout unless `cwd` is given) in its own process group and resolves with its exit code and combined output;
 * after `timeoutMs` the whole group is killed (a stuck demo must not outlive the test).
 */
function run(command: string, args: string[], env: NodeJS.ProcessEnv, timeoutMs: number, cwd = checkout): Promise<Run> {
  const label = [command, ...args].join(" ");
  const started = Date.now();
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd, env, detached: true, stdio: ["ignore", "pipe", "pipe"] });
    let output = "";
    const collect = (d: Buffer) => {
      output += d.toString();
    };
    child.stdout.on("data", collect);
    child.stderr.on("data", collect);
    const timer = setTimeout(() => {
      output += `\n[killed after ${timeoutMs} ms]`;
      if (child.pid) process.kill(-child.pid, "SIGKILL");
    }, timeoutMs);
    child.once("error", reject);
    child.once("close", (code) => {
      clearTimeout(timer);
      timings.push(`${label} ${((Date.now() - started) / 1000).toFixed(1)} s`);
      resolve({ code, output });
    });
  });
}

/** The last lines of a command's output, for a failure message. */
const tail = (r: Run) => r.output.split("\n").slice(-40).join("\n");

/**
 * The environment of the clone's commands: ours without what points at this run's vitest or its
 * infrastructure (the clone must start its own embedded Postgres, NATS and S3), on free ports so
 * a stack already running on this machine is neither hit nor disturbed.
 */
async function cloneEnv(): Promise<NodeJS.ProcessEnv> {
  const env: NodeJS.ProcessEnv = {};
  const excluded =
    /^(VITEST|TEST$|NODE_ENV$|DATABASE_URL$|NATS_URL$|S3_|REDLINE_|PORT$|HOST$|[A-Z]+_ADDR$|npm_|PNPM_SCRIPT)/;
  for (const [k, v] of Object.entries(process.env)) if (!excluded.test(k)) env[k] = v;
  const addr = async () => `127.0.0.1:${await freePort()}`;
  return {
    ...env,
    PORT: String(await freePort()),
    DOCUMENTS_ADDR: await addr(),
    SESSIONS_ADDR: await addr(),
    AGENT_ADDR: await addr(),
    BILLING_ADDR: await addr(),
    INGEST_ADDR: await addr(),
    REDLINE_POSTGRES_PORT: "0",
    REDLINE_NATS_PORT: "0",
    REDLINE_S3_PORT: "0",
  };
}

describe("a fresh checkout under a 0700 directory", () => {
  it("installs offline, runs the main job and a system test file, as root", { timeout: 20 * 60_000 }, async () => {
    expect(statSync(home).mode & 0o777).toBe(0o700);
    const env = await cloneEnv();
    const gitEnv = { ...env, GIT_TERMINAL_PROMPT: "0" };

    const clone = await run("git", ["clone", "--quiet", REPO_ROOT, checkout], gitEnv, 120_000, home);
    expect(clone.code, tail(clone)).toBe(0);
    // Nothing beside the checkout: the corpus and the spec come from the clone itself.
    expect(existsSync(join(home, "shared"))).toBe(false);

    const install = await run(
      "pnpm",
      ["install", "--offline", "--frozen-lockfile", "--reporter=silent"],
      { ...env, CI: "true" },
      600_000,
    );
    expect(install.code, tail(install)).toBe(0);
    const codegen = await run("pnpm", ["--silent", "codegen"], env, 300_000);
    expect(codegen.code, tail(codegen)).toBe(0);

    const demo = await run("pnpm", ["demo"], env, 600_000);
    expect(demo.code, tail(demo)).toBe(0);
    expect(demo.output).toContain('Replaced 1 occurrence of "Acme Corporation" with "Globex Inc"');
    expect(demo.output).toContain("Added a row with 3 cells to table 1.");
    expect(demo.output).toContain('Added a paragraph at the end of section "4. Term and Termination".');
    expect(demo.output).toContain("usage: 1 op charged, 3/500 used, 497 left");
    const result = join(checkout, "samples", "contract.redline.html");
    expect(demo.output).toContain(`Final HTML written to ${result}`);
    expect(readFileSync(result, "utf8")).toContain("Globex Inc");

    if (asRoot) {
      // The cluster lives where the postgres user can reach it, and the checkout stays 0700.
      const cluster = postgresDataDir(join(dataDir, "postgres"));
      expect(cluster.startsWith(`${STATE_ROOT}/postgres/`)).toBe(true);
      expect(existsSync(join(cluster, "PG_VERSION"))).toBe(true);
      expect(existsSync(join(dataDir, "postgres"))).toBe(false);
      expect(readdirSync(STAGE_ROOT).some((name) => name.startsWith("postgres-"))).toBe(true);
    }
    expect(statSync(home).mode & 0o777).toBe(0o700);

    const vitest = await run("pnpm", ["exec", "vitest", "run", "test/session-list.test.ts"], env, 600_000);
    expect(vitest.code, tail(vitest)).toBe(0);
    const report = JSON.parse(readFileSync(join(dataDir, "test-results.json"), "utf8")) as {
      numPassedTests: number;
      numFailedTests: number;
    };
    expect(report.numFailedTests).toBe(0);
    expect(report.numPassedTests).toBe(2); // every test of session-list.test.ts ran and passed
  });
});
