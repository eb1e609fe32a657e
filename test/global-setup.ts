// Vitest global setup: one local infrastructure (Postgres, NATS with JetStream, S3) for the whole
// run, on random free ports in a fresh temp dir. DATABASE_URL, NATS_URL and S3_ENDPOINT (+ S3_*)
// replace the embedded pieces, as in startLocalInfra. Tests read it with inject("infra") and
// should create their own database with createTestDatabase(infra.databaseUrl, "<file name>").
import {
  chmodSync,
  existsSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import os from "node:os";
import { join } from "node:path";
import { isAlive, processStartTime, startLocalInfra, stopOrphanedInfra } from "@redline/local-infra";
import type { TestProject } from "vitest/node";

/** What inject("infra") returns. */
export interface TestInfra {
  /** Admin URL (database "postgres"); create a database per test file. */
  databaseUrl: string;
  natsUrl: string;
  s3: { endpoint: string; accessKey: string; secretKey: string; bucket: string; region: string };
}

declare module "vitest" {
  export interface ProvidedContext {
    infra: TestInfra;
  }
}

const PREFIX = "redline-test-";
const OWNER_FILE = "owner.pid";

/** Removes temp dirs of earlier runs whose vitest process died without teardown (e.g. kill -9). */
async function reapAbandonedDirs(): Promise<void> {
  const tmp = os.tmpdir();
  for (const name of readdirSync(tmp)) {
    if (!name.startsWith(PREFIX)) continue;
    const dir = join(tmp, name);
    try {
      const ownerFile = join(dir, OWNER_FILE);
      if (existsSync(ownerFile)) {
        const [pid, start] = readFileSync(ownerFile, "utf8").trim().split(" ").map(Number);
        const alive =
          isAlive(pid) && (Number.isNaN(start) || processStartTime(pid) === null || processStartTime(pid) === start);
        if (alive) continue;
      } else if (Date.now() - statSync(dir).mtimeMs < 10 * 60_000) {
        continue; // possibly being created right now by a concurrent run
      }
      await stopOrphanedInfra(dir);
      rmSync(dir, { recursive: true, force: true });
    } catch {
      // not ours to worry about
    }
  }
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  await reapAbandonedDirs();
  const dataDir = mkdtempSync(join(os.tmpdir(), PREFIX));
  // mkdtemp makes it 0700; postgres runs as the "postgres" user when we are root and must get in.
  chmodSync(dataDir, 0o755);
  writeFileSync(join(dataDir, OWNER_FILE), `${process.pid} ${processStartTime(process.pid) ?? ""}\n`);

  // Startup errors carry the servers' last log lines; REDLINE_TEST_INFRA_LOG=1 shows all of them.
  const infra = await startLocalInfra({
    dataDir,
    env: process.env,
    persistent: false,
    log: process.env.REDLINE_TEST_INFRA_LOG === "1" ? (line) => console.log(line) : undefined,
  }).catch((err: unknown) => {
    rmSync(dataDir, { recursive: true, force: true });
    throw err;
  });

  project.provide("infra", { databaseUrl: infra.databaseUrl, natsUrl: infra.natsUrl, s3: { ...infra.s3 } });

  return async () => {
    try {
      await infra.stop();
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  };
}
