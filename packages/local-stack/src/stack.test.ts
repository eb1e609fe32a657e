// The stack supervisor with fake services (tiny node servers) against the shared test infra.
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import net from "node:net";
import os from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { canConnect, DEFAULT_PORTS, ephemeralLow, freePort, infraEnv, isAlive } from "@redline/local-infra";
import { afterAll, describe, expect, inject, it } from "vitest";
import { stackAddrs } from "./addrs.js";
import { SERVICE_NAMES, type ServiceName } from "./names.js";
import { type RunningStack, startStack } from "./stack.js";
import { findRunningStack, isStackRunning, readStackFile } from "./stack-file.js";
import { STOP_GRACE_MS } from "./supervised.js";

const infra = inject("infra");
const root = mkdtempSync(join(os.tmpdir(), "redline-stacktest-"));
chmodSync(root, 0o755);
afterAll(() => rmSync(root, { recursive: true, force: true }));

const FAKE = `
import http from "node:http";
import net from "node:net";
import { appendFileSync } from "node:fs";
const name = process.env.FAKE_NAME;
const events = process.env.FAKE_EVENTS;
let server;
if (name === "gateway") {
  server = http.createServer((req, res) => {
    res.writeHead(req.url === "/health" ? 200 : 404, { "content-type": "application/json" });
    res.end(JSON.stringify({ env: { DATABASE_URL: process.env.DATABASE_URL, NATS_URL: process.env.NATS_URL, S3_ENDPOINT: process.env.S3_ENDPOINT, S3_BUCKET: process.env.S3_BUCKET, DOCUMENTS_ADDR: process.env.DOCUMENTS_ADDR } }));
  });
  server.listen(Number(process.env.PORT), process.env.HOST);
} else {
  const addr = process.env[name.toUpperCase() + "_ADDR"];
  server = net.createServer((s) => s.end());
  server.listen(Number(addr.slice(addr.lastIndexOf(":") + 1)), addr.slice(0, addr.lastIndexOf(":")));
}
server.on("listening", () => console.log(JSON.stringify({ level: 30, msg: "listening", name })));
// FAKE_DRAIN_<NAME>_MS: how long the service takes to drain after SIGTERM, as a turn in flight would.
const drainMs = Number(process.env["FAKE_DRAIN_" + name.toUpperCase() + "_MS"] ?? 0);
process.on("SIGTERM", () => {
  appendFileSync(events, "stop " + name + "\\n");
  server.close();
  setTimeout(() => {
    if (drainMs) appendFileSync(events, "drained " + name + "\\n");
    process.exit(0);
  }, drainMs);
});
`;

/** Writes fake services; each reads its name from FAKE_NAME (set per entry through a wrapper). */
function fakeServices(dir: string): (name: ServiceName) => string {
  writeFileSync(join(dir, "fake.mjs"), FAKE);
  for (const name of SERVICE_NAMES) {
    writeFileSync(
      join(dir, `${name}.mjs`),
      `process.env.FAKE_NAME = ${JSON.stringify(name)};\nawait import("./fake.mjs");\n`,
    );
  }
  return (name) => join(dir, `${name}.mjs`);
}

async function testEnv(events: string): Promise<NodeJS.ProcessEnv> {
  const addr = async () => `127.0.0.1:${await freePort()}`;
  return {
    ...process.env,
    ...infraEnv(infra),
    DOCUMENTS_ADDR: await addr(),
    SESSIONS_ADDR: await addr(),
    AGENT_ADDR: await addr(),
    BILLING_ADDR: await addr(),
    INGEST_ADDR: await addr(),
    PORT: String(await freePort()),
    HOST: "127.0.0.1",
    FAKE_EVENTS: events,
  };
}

describe("startStack", () => {
  it("starts services then gateway, restarts a crashed service, and stops in order", async () => {
    const dir = join(root, "a");
    mkdirSync(dir);
    const events = join(dir, "events.log");
    writeFileSync(events, "");
    const env = await testEnv(events);
    const lines: string[] = [];
    let stack: RunningStack | undefined;
    try {
      stack = await startStack({
        dataDir: join(dir, "data"),
        env,
        serviceEntry: fakeServices(dir),
        log: (l) => lines.push(l),
      });
      expect(stack.gatewayUrl).toBe(`http://127.0.0.1:${env.PORT}`);
      expect(stack.databaseUrl).toBe(infra.databaseUrl);

      // Children get the infra and address variables.
      const health = (await (await fetch(`${stack.gatewayUrl}/health`)).json()) as { env: Record<string, string> };
      expect(health.env).toEqual({
        DATABASE_URL: infra.databaseUrl,
        NATS_URL: infra.natsUrl,
        S3_ENDPOINT: infra.s3.endpoint,
        S3_BUCKET: infra.s3.bucket,
        DOCUMENTS_ADDR: env.DOCUMENTS_ADDR,
      });
      expect(lines.some((l) => l.startsWith("gateway   | ") && l.includes('"listening"'))).toBe(true);

      // stack.json describes the running stack.
      const info = readStackFile(stack.dataDir);
      expect(info).toMatchObject({
        pid: process.pid,
        status: "up",
        gatewayUrl: stack.gatewayUrl,
        addrs: { documents: env.DOCUMENTS_ADDR },
      });
      expect(Object.keys(info?.children ?? {}).sort()).toEqual([...SERVICE_NAMES].sort());
      // It carries the object store's keys to scripts (admin, demo), so only its owner reads it.
      expect(info?.s3).toMatchObject({ accessKey: infra.s3.accessKey, secretKey: infra.s3.secretKey });
      expect(statSync(join(stack.dataDir, "stack.json")).mode & 0o777).toBe(0o600);
      expect(isStackRunning(stack.dataDir)).toBe(true);
      expect((await findRunningStack(stack.dataDir))?.gatewayUrl).toBe(stack.gatewayUrl);

      // A crashed service is restarted, and stack.json follows.
      const oldPid = info?.children.documents?.pid as number;
      process.kill(oldPid, "SIGKILL");
      const deadline = Date.now() + 20_000;
      let newPid: number | undefined;
      while (Date.now() < deadline) {
        newPid = readStackFile(stack.dataDir)?.children.documents?.pid;
        if (newPid && newPid !== oldPid && (await canConnect(Number(env.DOCUMENTS_ADDR?.split(":")[1])))) break;
        await sleep(100);
      }
      expect(newPid).not.toBe(oldPid);
      expect(lines.some((l) => /documents exited \(signal SIGKILL\); restarting/.test(l))).toBe(true);

      const pids = Object.values(readStackFile(stack.dataDir)?.children ?? {}).map((c) => c.pid);
      await stack.stop();
      stack = undefined;
      const stopped = readFileSync(events, "utf8").trim().split("\n");
      expect(stopped[0]).toBe("stop gateway");
      expect(stopped.slice(1).sort()).toEqual([
        "stop agent",
        "stop billing",
        "stop documents",
        "stop ingest",
        "stop sessions",
      ]);
      for (const pid of pids) expect(isAlive(pid)).toBe(false);
      expect(existsSync(join(dir, "data", "stack.json"))).toBe(false);
      expect(await canConnect(Number(env.PORT))).toBe(false);
    } finally {
      await stack?.stop();
    }
  });

  it("gives a draining service its shutdown deadline, and wakes a stopped (SIGSTOP) one to stop it", async () => {
    const dir = join(root, "d");
    mkdirSync(dir);
    const events = join(dir, "events.log");
    writeFileSync(events, "");
    // Longer than the 5 s grace the supervisor used to give, well inside the services' own deadline.
    const env = { ...(await testEnv(events)), FAKE_DRAIN_DOCUMENTS_MS: "7000" };
    let stack: RunningStack | undefined;
    try {
      stack = await startStack({ dataDir: join(dir, "data"), env, serviceEntry: fakeServices(dir), log: () => {} });
      const children = readStackFile(stack.dataDir)?.children;
      const agentPid = children?.agent?.pid as number;
      process.kill(agentPid, "SIGSTOP");
      const started = Date.now();
      await stack.stop();
      stack = undefined;
      const took = Date.now() - started;
      const stopped = readFileSync(events, "utf8").trim().split("\n");
      // documents finished its drain (SIGKILL would have cut it off before this line).
      expect(stopped).toContain("drained documents");
      // The stopped agent handled SIGTERM itself, long before a SIGKILL at the grace's end.
      expect(stopped).toContain("stop agent");
      expect(took).toBeGreaterThanOrEqual(7_000);
      expect(took).toBeLessThan(STOP_GRACE_MS);
      for (const child of Object.values(children ?? {})) expect(isAlive(child.pid)).toBe(false);
    } finally {
      await stack?.stop();
    }
  }, 60_000);

  it("listens by default below the kernel's source ports, which an outgoing connection's TIME_WAIT can hold", () => {
    // Seen: `pnpm demo` refused to start because billing's port was the local end of a closed
    // loopback connection, in TIME_WAIT for a minute; no listener can take such a port.
    const addrs = stackAddrs({});
    const ports = [
      ...SERVICE_NAMES.map((name) => Number(addrs[name].split(":").pop())),
      ...Object.values(DEFAULT_PORTS),
    ];
    expect(ports).toHaveLength(9);
    for (const port of ports) expect(port).toBeLessThan(Math.min(32_768, ephemeralLow()));
    // Below freePort's range as well, so a test's random port never takes a default one.
    for (const port of ports) expect(port).toBeLessThan(10_000);
  });

  it("fails clearly when a service entry file is missing, starting nothing", async () => {
    const dir = join(root, "b");
    mkdirSync(dir);
    const env = await testEnv(join(dir, "events.log"));
    await expect(
      startStack({ dataDir: join(dir, "data"), env, serviceEntry: (name) => join(dir, "missing", name, "main.ts") }),
    ).rejects.toThrow(/service entry file\(s\) not found: .*missing\/documents\/main\.ts/);
    expect(existsSync(join(dir, "data", "stack.json"))).toBe(false);
  });

  it("fails clearly when a service port is taken", async () => {
    const dir = join(root, "c");
    mkdirSync(dir);
    const env = await testEnv(join(dir, "events.log"));
    const blocker = net.createServer();
    const port = Number(env.BILLING_ADDR?.split(":")[1]);
    await new Promise<void>((r) => blocker.listen(port, "127.0.0.1", r));
    try {
      await expect(startStack({ dataDir: join(dir, "data"), env, serviceEntry: fakeServices(dir) })).rejects.toThrow(
        `port(s) already in use: billing (BILLING_ADDR: ${env.BILLING_ADDR})`,
      );
    } finally {
      blocker.close();
    }
  });
});
