// The bench-only preload behind `pnpm bench o`'s deployed run: loaded as a service process loads
// it (NODE_OPTIONS --import, before the tsx loader), it must switch the service-kit instance the
// process itself set up, or the bench would compare a setting with itself.
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { request } from "node:http";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { REPO_ROOT, RUNTIME_ARGS } from "@redline/local-stack";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const PRELOAD = pathToFileURL(join(dirname(fileURLToPath(import.meta.url)), "recording-switch.mjs")).href;

/** A process that sets up tracing as a service's main does, then idles. */
const SERVICE = `
  const kit = await import("@redline/service-kit");
  kit.initTracing("probe", { tracesUrl: "http://127.0.0.1:9/v1/traces" });
  console.log("ready");
  setInterval(() => {}, 60_000);
`;

function get(socketPath: string, path: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request({ socketPath, path }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString("utf8") }));
    });
    req.on("error", reject);
    req.end();
  });
}

describe("recording-switch.mjs", () => {
  let dir: string;
  let child: ChildProcess;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "redline-switch-test-"));
    child = spawn(process.execPath, [...RUNTIME_ARGS.tsx, "--input-type=module", "-e", SERVICE], {
      cwd: REPO_ROOT,
      env: {
        ...process.env,
        NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ""} --import=${PRELOAD}`.trim(),
        BENCH_RECORDING_SWITCH_DIR: dir,
      },
      stdio: ["ignore", "pipe", "inherit"],
    });
    await new Promise<void>((resolve, reject) => {
      child.stdout?.on("data", (d: Buffer) => {
        if (d.toString("utf8").includes("ready")) resolve();
      });
      child.once("exit", (code) => reject(new Error(`the probe exited (${code})`)));
    });
  });

  afterAll(() => {
    child?.kill();
    rmSync(dir, { recursive: true, force: true });
  });

  it("switches tracing and metrics in the process's own service-kit and answers what is now on", async () => {
    const socket = join(dir, `${child.pid}.sock`);
    // The preload listens as it loads; "ready" comes after the service's imports, later still.
    await expect.poll(() => existsSync(socket), { timeout: 5_000 }).toBe(true);
    const off = await get(socket, "/?tracing=0&metrics=1");
    expect(off.status).toBe(200);
    expect(JSON.parse(off.body)).toEqual({ tracing: false, metrics: true });
    // Tracing back on reads true only from the instance whose initTracing ran: a second copy
    // of the module would answer false here.
    const on = await get(socket, "/?tracing=1&metrics=0");
    expect(JSON.parse(on.body)).toEqual({ tracing: true, metrics: false });
    const flushed = await get(socket, "/flush");
    expect(flushed.status).toBe(200);
    expect(JSON.parse(flushed.body)).toEqual({ tracing: true, metrics: false });
  });
});
