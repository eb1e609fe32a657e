// The graceful stop in process: signal handling (deadline, second signal), the serve order
// (NOT_SERVING while still accepting, then no server), draining a call in flight, and where a
// backend binds.
import { setTimeout as sleep } from "node:timers/promises";
import { healthV1 } from "@redline/grpc-stubs";
import { afterEach, describe, expect, it } from "vitest";
import { listenAddr } from "./config.js";
import { createLogger } from "./logger.js";
import { bindService, createRpcClient, startGrpcServer } from "./rpc.js";
import { serveService } from "./serve.js";
import { type CloseOptions, onShutdown } from "./shutdown.js";

const log = createLogger("shutdown-test", "silent");
const { SERVING, NOT_SERVING } = healthV1.HealthCheckResponse_ServingStatus;

describe("onShutdown", () => {
  let uninstall: (() => void) | undefined;
  afterEach(() => uninstall?.());

  it("closes once with the unready window and a drain budget inside the deadline, then exits 0", async () => {
    const exits: number[] = [];
    const calls: CloseOptions[] = [];
    uninstall = onShutdown(
      async (opts) => {
        calls.push(opts);
      },
      log,
      { deadlineMs: 20_000, unreadyMs: 500, exit: (code) => exits.push(code) },
    );
    process.emit("SIGTERM", "SIGTERM");
    await sleep(10);
    expect(calls).toEqual([{ unreadyMs: 500, drainMs: 15_500 }]);
    expect(exits).toEqual([0]);
  });

  it("exits 1 at the deadline when close hangs, and at once with 128 + n on a second signal", async () => {
    const exits: number[] = [];
    uninstall = onShutdown(() => new Promise(() => {}), log, { deadlineMs: 200, exit: (code) => exits.push(code) });
    process.emit("SIGINT", "SIGINT");
    process.emit("SIGTERM", "SIGTERM");
    expect(exits).toEqual([143]);
    await sleep(300);
    expect(exits).toEqual([143, 1]);
  });

  it("exits 1 when close fails", async () => {
    const exits: number[] = [];
    uninstall = onShutdown(() => Promise.reject(new Error("pool stuck")), log, { exit: (code) => exits.push(code) });
    process.emit("SIGTERM", "SIGTERM");
    await sleep(10);
    expect(exits).toEqual([1]);
  });
});

describe("serveService close", () => {
  it("answers NOT_SERVING while it still accepts, stops background work at once, then stops serving", async () => {
    const order: string[] = [];
    const running = await serveService(
      "probe",
      "127.0.0.1:0",
      { log },
      {
        rpc: { dir: new URL("./", import.meta.url), definitions: [] },
        health: { ok: async () => true },
        stop: async () => {
          order.push("stop");
        },
        release: async () => {
          order.push("release");
        },
      },
    );
    const health = createRpcClient(healthV1.HealthService, running.address);
    try {
      expect((await health.check({ service: "" })).status).toBe(SERVING);
      const closed = running.close({ unreadyMs: 300 });
      expect(order).toEqual(["stop"]);
      expect((await health.check({ service: "" })).status).toBe(NOT_SERVING);
      await closed;
      expect(order).toEqual(["stop", "release"]);
      await expect(health.check({ service: "" }, { timeoutMs: 300 })).rejects.toThrow();
      // A second close waits for the same shutdown.
      await running.close();
      expect(order).toEqual(["stop", "release"]);
    } finally {
      health.close();
    }
  });
});

describe("startGrpcServer close", () => {
  const slowHealth = (ms: number) =>
    bindService(healthV1.HealthService, {
      async check() {
        await sleep(ms);
        return { status: SERVING };
      },
    });

  it("lets a call in flight finish within the drain budget", async () => {
    const server = await startGrpcServer("127.0.0.1:0", [slowHealth(300)], log);
    const client = createRpcClient(healthV1.HealthService, server.address);
    try {
      const inFlight = client.check({ service: "" });
      while (server.inFlight() === 0) await sleep(10);
      expect(await server.close(5_000)).toBe("drained");
      expect((await inFlight).status).toBe(SERVING);
    } finally {
      client.close();
    }
  });

  it("cancels a call still running at the end of the drain budget", async () => {
    const server = await startGrpcServer("127.0.0.1:0", [slowHealth(5_000)], log);
    const client = createRpcClient(healthV1.HealthService, server.address);
    try {
      const inFlight = client.check({ service: "" }, { timeoutMs: 10_000 });
      while (server.inFlight() === 0) await sleep(10);
      const started = Date.now();
      expect(await server.close(200)).toBe("forced");
      expect(Date.now() - started).toBeLessThan(1_000);
      await expect(inFlight).rejects.toThrow();
    } finally {
      client.close();
    }
  });
});

describe("listenAddr", () => {
  it("binds LISTEN_ADDR when set, else the service's own address, else the local default", () => {
    expect(listenAddr({ LISTEN_ADDR: "0.0.0.0:8061", DOCUMENTS_ADDR: "documents:8061" }, "documents")).toBe(
      "0.0.0.0:8061",
    );
    expect(listenAddr({ LISTEN_ADDR: " ", AGENT_ADDR: "127.0.0.1:7000" }, "agent")).toBe("127.0.0.1:7000");
    expect(listenAddr({}, "ingest")).toBe("127.0.0.1:8065");
  });
});
