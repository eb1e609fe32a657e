// The metrics helpers: get-or-create metrics, scrape-time gauges with several sources, the per-RPC
// server's codes and durations, the /metrics listener on port 0, and health's single flight.

import { setTimeout as sleep } from "node:timers/promises";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { accountsV1, billingV1, healthV1 } from "@redline/grpc-stubs";
import { describe, expect, it } from "vitest";
import { NotFoundError } from "./errors.js";
import { HEALTH_CACHE_MS, healthService, singleFlight } from "./health.js";
import { createLogger } from "./logger.js";
import {
  counter,
  gaugeOnScrape,
  grpcCodeName,
  metricsEnabled,
  metricsRegistry,
  setMetricsRecording,
  splitGrpcPath,
  startMetricsServer,
} from "./metrics.js";
import { bindService, createRpcClient, startGrpcServer } from "./rpc.js";

const log = createLogger("metrics-test", "silent");

const Billing = {
  resolveApiKey: accountsV1.AccountsServiceService.resolveApiKey,
  getUsage: billingV1.BillingServiceService.getUsage,
};

/** A real server answering ResolveApiKey with an empty principal and GetUsage with `getUsage`, and a client of it. */
async function billingServer(getUsage: () => Promise<billingV1.GetUsageResponse>) {
  const handlers = { resolveApiKey: async () => accountsV1.ResolveApiKeyResponse.fromPartial({}), getUsage };
  const server = await startGrpcServer("127.0.0.1:0", [bindService(Billing, handlers)], log);
  const client = createRpcClient(Billing, server.address);
  return {
    client,
    close: async () => {
      client.close();
      await server.close(100);
    },
  };
}

/** The value of one series of `name` with exactly `labels`, read from the registry. */
async function seriesValue(name: string, labels: Record<string, string> = {}): Promise<number | undefined> {
  const metric = metricsRegistry.getSingleMetric(name);
  if (!metric) return undefined;
  const { values } = await metric.get();
  const hit = values.find((v) => JSON.stringify(v.labels) === JSON.stringify(labels));
  return hit?.value;
}

describe("metrics helpers", () => {
  it("counter() returns the one registered metric when asked twice (several services in one process)", () => {
    const a = counter("redline_test_twice_total", "test", ["x"]);
    const b = counter("redline_test_twice_total", "test", ["x"]);
    expect(b).toBe(a);
  });

  it("gaugeOnScrape adds up its sources, skips a failing one and forgets a removed one", async () => {
    const name = "redline_test_scrape_gauge";
    const stopA = gaugeOnScrape(name, "test", ["pool"], (add) => add({ pool: "p" }, 2));
    const stopB = gaugeOnScrape(name, "test", ["pool"], async (add) => add({ pool: "p" }, 3));
    const stopC = gaugeOnScrape(name, "test", ["pool"], async () => {
      throw new Error("dependency down");
    });
    expect(await seriesValue(name, { pool: "p" })).toBe(5);
    stopB();
    expect(await seriesValue(name, { pool: "p" })).toBe(2);
    stopA();
    stopC();
    expect(await seriesValue(name, { pool: "p" })).toBeUndefined();
  });

  it("splits a gRPC path into service and method and names codes", () => {
    expect(splitGrpcPath("/redline.documents.v1.DocumentsService/GetDocument")).toEqual({
      grpc_service: "redline.documents.v1.DocumentsService",
      grpc_method: "GetDocument",
    });
    expect(grpcCodeName(0)).toBe("OK");
    expect(grpcCodeName(5)).toBe("NOT_FOUND");
    expect(grpcCodeName(99)).toBe("99");
  });

  it("a served RPC counts by the code its caller got and is timed; a lost database counts as UNAVAILABLE", async () => {
    const services: Record<string, string> = {
      ResolveApiKey: "redline.accounts.v1.AccountsService",
      GetUsage: "redline.billing.v1.BillingService",
    };
    const handled = (method: string, code: string) =>
      seriesValue("redline_grpc_server_handled_total", {
        grpc_service: services[method],
        grpc_method: method,
        grpc_code: code,
      });
    const before = {
      ok: (await handled("ResolveApiKey", "OK")) ?? 0,
      missing: (await handled("GetUsage", "NOT_FOUND")) ?? 0,
      down: (await handled("GetUsage", "UNAVAILABLE")) ?? 0,
    };
    let usageCalls = 0;
    const { client, close } = await billingServer(async () => {
      // First a client's mistake, then what a connection refused looks like to a handler.
      if (usageCalls++ === 0) throw new NotFoundError("missing");
      throw Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:5432"), { code: "ECONNREFUSED" });
    });
    try {
      await client.resolveApiKey({ apiKey: "k" });
      await expect(client.getUsage({})).rejects.toMatchObject({ httpStatus: 404 });
      await expect(client.getUsage({})).rejects.toMatchObject({ httpStatus: 503 });
    } finally {
      await close();
    }
    expect(await handled("ResolveApiKey", "OK")).toBe(before.ok + 1);
    expect(await handled("GetUsage", "NOT_FOUND")).toBe(before.missing + 1);
    expect(await handled("GetUsage", "UNAVAILABLE")).toBe(before.down + 1);
    expect(await handled("GetUsage", "INTERNAL")).toBeUndefined();
    const text = await metricsRegistry.metrics();
    expect(text).toMatch(
      /redline_grpc_server_handling_seconds_count\{grpc_service="redline\.billing\.v1\.BillingService",grpc_method="GetUsage"\} [2-9]/,
    );
  });

  it("setMetricsRecording(false) stops the per-call hooks recording, and true resumes them", async () => {
    const labels = {
      grpc_service: "redline.accounts.v1.AccountsService",
      grpc_method: "ResolveApiKey",
      grpc_code: "OK",
    };
    const { client, close } = await billingServer(async () => billingV1.GetUsageResponse.fromPartial({}));
    try {
      const before = (await seriesValue("redline_grpc_server_handled_total", labels)) ?? 0;
      try {
        setMetricsRecording(false);
        expect(metricsEnabled()).toBe(false);
        await client.resolveApiKey({ apiKey: "k" });
        expect((await seriesValue("redline_grpc_server_handled_total", labels)) ?? 0).toBe(before);
      } finally {
        setMetricsRecording(true);
      }
      await client.resolveApiKey({ apiKey: "k" });
      expect(await seriesValue("redline_grpc_server_handled_total", labels)).toBe(before + 1);
    } finally {
      await close();
    }
  });

  it("serves the Prometheus text on GET /metrics at port 0, 404 elsewhere, and closes", async () => {
    const server = await startMetricsServer("127.0.0.1:0", log);
    if (!server) throw new Error("expected a server");
    try {
      expect(server.address).toMatch(/^127\.0\.0\.1:\d+$/);
      expect(server.address.endsWith(":0")).toBe(false);
      const res = await fetch(`http://${server.address}/metrics`);
      expect(res.status).toBe(200);
      expect(res.headers.get("content-type")).toContain("text/plain");
      const text = await res.text();
      expect(text).toContain("# TYPE redline_process_resident_memory_bytes gauge");
      expect(text).toContain("# TYPE redline_nodejs_eventloop_lag_seconds gauge");
      // After a full collection, the heap it left (pnpm soak judges this figure).
      setFlagsFromString("--expose-gc");
      (runInNewContext("gc") as () => void)();
      await sleep(50);
      const afterGc = /^redline_nodejs_heap_used_after_major_gc_bytes (\d+)$/m.exec(
        await (await fetch(`http://${server.address}/metrics`)).text(),
      );
      expect(Number(afterGc?.[1])).toBeGreaterThan(1024 * 1024);
      expect(Number(afterGc?.[1])).toBeLessThanOrEqual(process.memoryUsage().heapTotal);
      expect((await fetch(`http://${server.address}/other`)).status).toBe(404);
    } finally {
      await server.close();
    }
    await expect(fetch(`http://${server.address}/metrics`)).rejects.toThrow();
  });

  it("refuses an address that is not host:port", async () => {
    await expect(startMetricsServer("nonsense", log)).rejects.toThrow(/METRICS_ADDR/);
  });
});

describe("health checks, single flight", () => {
  it("singleFlight shares one run among concurrent callers and reuses it for ttl", async () => {
    let runs = 0;
    const check = singleFlight(async () => {
      runs++;
      await sleep(20);
      return runs;
    }, 100);
    expect(await Promise.all([check(), check(), check()])).toEqual([1, 1, 1]);
    expect(await check()).toBe(1);
    await sleep(120);
    expect(await check()).toBe(2);
  });

  it("singleFlight caches a failure for ttl too, then tries again", async () => {
    let runs = 0;
    const check = singleFlight(async () => {
      runs++;
      throw new Error(`down ${runs}`);
    }, 50);
    await expect(check()).rejects.toThrow("down 1");
    await expect(check()).rejects.toThrow("down 1");
    await sleep(70);
    await expect(check()).rejects.toThrow("down 2");
  });

  it("a backend's grpc.health.v1 Check probes its dependencies at most once per HEALTH_CACHE_MS", async () => {
    let probes = 0;
    const server = await startGrpcServer("127.0.0.1:0", [healthService({ postgres: async () => void probes++ })], log);
    const client = createRpcClient(healthV1.HealthService, server.address);
    try {
      const answers = await Promise.all(Array.from({ length: 20 }, () => client.check({ service: "" })));
      expect(answers.every((a) => a.status === healthV1.HealthCheckResponse_ServingStatus.SERVING)).toBe(true);
      expect(probes).toBe(1);
      await sleep(HEALTH_CACHE_MS + 50);
      await client.check({ service: "" });
      expect(probes).toBe(2);
    } finally {
      client.close();
      await server.close(100);
    }
  });
});
