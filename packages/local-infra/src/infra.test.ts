// startLocalInfra: env overrides, and recovery of all three servers after the owner's kill -9.
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import net from "node:net";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import pg from "pg";
import { describe, expect, it } from "vitest";
import { type LocalInfra, startLocalInfra } from "./infra.js";
import { startNats } from "./nats.js";
import { canConnect, freePort } from "./proc.js";
import { testCleanups } from "./test-support.js";

const INFRA_TS = fileURLToPath(new URL("./infra.ts", import.meta.url));
const { cleanups, tempDir } = testCleanups("redline-infratest-");

/** Reads NATS' INFO greeting: proves a NATS server (not just anything) listens there. */
function natsInfo(port: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = net.connect({ port, host: "127.0.0.1" });
    socket.setTimeout(2_000, () => reject(new Error("no INFO from nats")));
    socket.once("data", (d) => {
      socket.destroy();
      resolve(d.toString());
    });
    socket.once("error", reject);
  });
}

async function pgSelect1(url: string): Promise<number> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query<{ one: number }>("select 1 as one")).rows[0].one;
  } finally {
    await client.end();
  }
}

async function checkAll(infra: Pick<LocalInfra, "databaseUrl" | "natsUrl" | "s3">): Promise<void> {
  expect(await pgSelect1(infra.databaseUrl)).toBe(1);
  expect(await natsInfo(Number(new URL(infra.natsUrl).port))).toMatch(/^INFO \{.*"jetstream":true/);
  // The embedded s3rver answers, and refuses an unsigned listing of the bucket.
  const res = await fetch(`${infra.s3.endpoint}/${infra.s3.bucket}`);
  expect(res.status).toBe(403);
  expect(await res.text()).toContain("<Code>AccessDenied</Code>");
}

describe("startLocalInfra", () => {
  it("uses external services from the environment and starts nothing for them", async () => {
    const dir = tempDir();
    const env = {
      DATABASE_URL: "postgres://u:p@db.example:5432/redline",
      NATS_URL: "nats://nats.example:4222",
      S3_ENDPOINT: "https://s3.example",
      S3_ACCESS_KEY: "AK",
      S3_SECRET_KEY: "SK",
      S3_BUCKET: "docs",
      S3_REGION: "eu-west-3",
    };
    const infra = await startLocalInfra({ dataDir: dir, env, persistent: false });
    expect(infra.embedded).toEqual({ postgres: false, nats: false, s3: false });
    expect(infra.databaseUrl).toBe(env.DATABASE_URL);
    expect(infra.natsUrl).toBe(env.NATS_URL);
    expect(infra.s3).toEqual({
      endpoint: "https://s3.example",
      accessKey: "AK",
      secretKey: "SK",
      bucket: "docs",
      region: "eu-west-3",
    });
    expect(existsSync(join(dir, "postgres"))).toBe(false);
    await infra.stop();
  });

  it("starts all three embedded, on random ports when not persistent, and stops them", async () => {
    const dir = tempDir();
    const infra = await startLocalInfra({ dataDir: dir, env: {}, persistent: false });
    expect(infra.embedded).toEqual({ postgres: true, nats: true, s3: true });
    expect(infra.s3).toMatchObject({ bucket: "redline", region: "us-east-1" });
    // A generated pair, never s3rver's public default.
    expect(infra.s3.accessKey).toMatch(/^RL[0-9A-F]{18}$/);
    expect(infra.s3.secretKey).toHaveLength(40);
    expect(JSON.parse(readFileSync(join(dir, "s3", ".credentials.json"), "utf8"))).toEqual({
      accessKey: infra.s3.accessKey,
      secretKey: infra.s3.secretKey,
    });
    await checkAll(infra);
    await infra.stop();
    for (const url of [infra.databaseUrl, infra.natsUrl, infra.s3.endpoint])
      expect(await canConnect(Number(new URL(url).port))).toBe(false);
    expect(existsSync(join(dir, "postgres"))).toBe(false);
  });

  it("takes the embedded ports from REDLINE_POSTGRES_PORT, REDLINE_NATS_PORT, REDLINE_S3_PORT", async () => {
    const ports = { postgres: await freePort(), nats: await freePort(), s3: await freePort() };
    const env = {
      REDLINE_POSTGRES_PORT: String(ports.postgres),
      REDLINE_NATS_PORT: String(ports.nats),
      REDLINE_S3_PORT: String(ports.s3),
    };
    const infra = await startLocalInfra({ dataDir: tempDir(), env, persistent: false });
    cleanups.push(() => infra.stop());
    expect(new URL(infra.databaseUrl).port).toBe(String(ports.postgres));
    expect(infra.natsUrl).toBe(`nats://127.0.0.1:${ports.nats}`);
    expect(infra.s3.endpoint).toBe(`http://127.0.0.1:${ports.s3}`);
    await checkAll(infra);

    await expect(startLocalInfra({ dataDir: tempDir(), env: { REDLINE_NATS_PORT: "8422x" } })).rejects.toThrow(
      "REDLINE_NATS_PORT=8422x is not a port number (0..65535)",
    );
  });

  it("recovers the same data dir and fixed ports after the owner was killed with -9 (orphans left running)", async () => {
    const dir = tempDir();
    const dataDir = join(dir, "data");
    const ports = { postgres: await freePort(), nats: await freePort(), s3: await freePort() };
    const script = join(dir, "owner.mts");
    writeFileSync(
      script,
      `import { startLocalInfra } from ${JSON.stringify(INFRA_TS)};
const infra = await startLocalInfra({ dataDir: ${JSON.stringify(dataDir)}, env: {}, ports: ${JSON.stringify(ports)} });
console.log(JSON.stringify(infra));
setInterval(() => {}, 60_000);
`,
    );
    const child: ChildProcess = spawn(process.execPath, ["--import", "tsx", script], {
      cwd: fileURLToPath(new URL("..", import.meta.url)),
      env: { ...process.env, REDLINE_NO_PDEATHSIG: "1" },
      stdio: ["ignore", "pipe", "pipe"],
    });
    cleanups.push(() => {
      child.kill("SIGKILL");
    });
    const first = await new Promise<LocalInfra>((resolve, reject) => {
      let out = "";
      let err = "";
      child.stderr?.on("data", (d: Buffer) => {
        err += d.toString();
      });
      child.stdout?.on("data", (d: Buffer) => {
        out += d.toString();
        const line = out.split("\n").find((l) => l.startsWith("{"));
        if (line) resolve(JSON.parse(line) as LocalInfra);
      });
      child.once("exit", (code) => reject(new Error(`owner exited (${code}):\n${err}`)));
    });
    await checkAll(first);
    child.kill("SIGKILL");
    await new Promise((r) => child.once("exit", r));
    // All three servers outlive their owner and keep the ports.
    for (const port of Object.values(ports)) expect(await canConnect(port)).toBe(true);

    const second = await startLocalInfra({ dataDir, env: {}, ports });
    cleanups.push(() => second.stop());
    expect(second.databaseUrl).toBe(first.databaseUrl);
    expect(second.natsUrl).toBe(first.natsUrl);
    expect(second.s3.endpoint).toBe(first.s3.endpoint);
    // The data dir's credentials survive the restart (services and signed links keep working).
    expect(second.s3.accessKey).toBe(first.s3.accessKey);
    expect(second.s3.secretKey).toBe(first.s3.secretKey);
    await checkAll(second);
    await second.stop();
    for (const port of Object.values(ports)) expect(await canConnect(port)).toBe(false);
  });
});

describe("startNats", () => {
  it("explains how to get nats-server when the binary is missing", async () => {
    const saved = process.env.NATS_SERVER_BIN;
    process.env.NATS_SERVER_BIN = "/nonexistent/nats-server";
    try {
      await expect(startNats({ dataDir: tempDir() })).rejects.toThrow(
        "nats-server not found: run `apt-get install -y nats-server` or set NATS_URL",
      );
    } finally {
      if (saved === undefined) delete process.env.NATS_SERVER_BIN;
      else process.env.NATS_SERVER_BIN = saved;
    }
  });

  it("refuses to take over a nats-server whose owner is alive", async () => {
    const dir = tempDir();
    const first = await startNats({ dataDir: dir });
    cleanups.push(() => first.stop());
    const pid = Number(readFileSync(join(dir, "nats-server.pid"), "utf8"));
    await expect(startNats({ dataDir: dir })).rejects.toThrow(
      `is already running (pid ${pid}) for live process ${process.pid}`,
    );
    expect(await natsInfo(first.port)).toMatch(/^INFO /);
  });
});
