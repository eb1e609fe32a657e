// The soak's heap sampler against a real GET /metrics (service-kit's listener in this process).
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createLogger, type MetricsServer, startMetricsServer } from "@redline/service-kit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { processStartTime } from "../../packages/local-infra/src/index.js";
import { HeapSampler, parseHeapKiB } from "./soak-heap.js";
import { summarizeRss } from "./soak-rss.js";

const dir = mkdtempSync(join(tmpdir(), "redline-soak-heap-"));
let server: MetricsServer;
beforeAll(async () => {
  server = (await startMetricsServer("127.0.0.1:0", createLogger("soak-heap-test", "silent"))) as MetricsServer;
});
afterAll(async () => {
  await server?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe("parseHeapKiB", () => {
  it("adds heap used and external memory in KiB; null when either gauge is missing", () => {
    const text = [
      "# TYPE redline_nodejs_heap_size_used_bytes gauge",
      "redline_nodejs_heap_size_used_bytes 2097152",
      'redline_nodejs_heap_space_size_used_bytes{space="old"} 1048576',
      "redline_nodejs_external_memory_bytes 1024",
    ].join("\n");
    expect(parseHeapKiB(text)).toBe(2049);
    expect(parseHeapKiB("redline_nodejs_heap_size_used_bytes 2097152\n")).toBeNull();
    expect(parseHeapKiB("")).toBeNull();
  });
});

describe("HeapSampler", () => {
  it("scrapes each service stack.json lists at its metrics address, and sees memory held between samples", async () => {
    // gateway: this process's real /metrics; documents: listed, but nothing listens (skipped).
    const me = { pid: process.pid, startTime: processStartTime(process.pid) };
    writeFileSync(
      join(dir, "stack.json"),
      JSON.stringify({
        pid: process.pid,
        children: { gateway: me, documents: me },
        metrics: { gateway: server.address, documents: "127.0.0.1:1" },
      }),
    );
    const sampler = new HeapSampler(dir, 60_000);
    await sampler.sample(1_000);
    const held = Buffer.alloc(48 * 1024 * 1024, 1); // external memory, as a leak of buffers would be
    await sampler.sample(2_000);
    const gateway = sampler.samples.get("gateway") ?? [];
    expect(gateway.map((s) => [s.at, s.pid])).toEqual([
      [1_000, process.pid],
      [2_000, process.pid],
    ]);
    expect(gateway[1].kib - gateway[0].kib).toBeGreaterThan(40 * 1024);
    expect(held.length).toBe(48 * 1024 * 1024);
    expect(sampler.samples.get("documents")).toEqual([]);
    expect(sampler.samples.get("agent")).toEqual([]);
    expect(summarizeRss(gateway, 0).samples).toBe(2);
  });
});
