// The soak's heap sampler against a real GET /metrics (service-kit's listener in this process).
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { processStartTime } from "@redline/local-infra";
import { createLogger, type MetricsServer, startMetricsServer } from "@redline/service-kit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { HeapSampler, parseHeapKiB } from "./heap.js";
import { summarizeRss } from "./rss.js";

const dir = mkdtempSync(join(tmpdir(), "redline-soak-heap-"));
let server: MetricsServer;
beforeAll(async () => {
  server = (await startMetricsServer("127.0.0.1:0", createLogger("soak-heap-test", "silent"))) as MetricsServer;
});
afterAll(async () => {
  await server?.close();
  rmSync(dir, { recursive: true, force: true });
});

/** A full (mark-compact) collection now, as `--expose-gc`'s gc() does. */
function fullGc(): void {
  setFlagsFromString("--expose-gc");
  (runInNewContext("gc") as () => void)();
}

describe("parseHeapKiB", () => {
  it("reads the heap after the last full GC in KiB; null before the first one (0) or without the gauge", () => {
    const text = [
      "# TYPE redline_nodejs_heap_used_after_major_gc_bytes gauge",
      "redline_nodejs_heap_used_after_major_gc_bytes 2097152",
      "redline_nodejs_heap_size_used_bytes 9097152",
    ].join("\n");
    expect(parseHeapKiB(text)).toBe(2048);
    expect(parseHeapKiB("redline_nodejs_heap_size_used_bytes 2097152\n")).toBeNull();
    expect(parseHeapKiB("")).toBeNull();
    expect(parseHeapKiB("redline_nodejs_heap_used_after_major_gc_bytes 0\n")).toBeNull();
  });
});

describe("HeapSampler", () => {
  it("scrapes each service stack.json lists at its metrics address, and sees memory a collection cannot free", async () => {
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
    fullGc();
    await sleep(50);
    await sampler.sample(1_000);
    // 2M doubles (16 MiB) still referenced, as a leak's entries would be; garbage beside them.
    const held = Array.from({ length: 2_000_000 }, (_, i) => i + 0.5);
    Array.from({ length: 2_000_000 }, (_, i) => i + 0.5);
    fullGc();
    await sleep(50);
    await sampler.sample(2_000);
    const gateway = sampler.samples.get("gateway") ?? [];
    expect(gateway.map((s) => [s.at, s.pid])).toEqual([
      [1_000, process.pid],
      [2_000, process.pid],
    ]);
    const grownMiB = (gateway[1].kib - gateway[0].kib) / 1024;
    expect(grownMiB).toBeGreaterThan(12);
    expect(grownMiB).toBeLessThan(28); // the garbage array was collected, not counted
    expect(held.length).toBe(2_000_000);
    expect(sampler.samples.get("documents")).toEqual([]);
    expect(sampler.samples.get("agent")).toEqual([]);
    expect(summarizeRss(gateway, 0).samples).toBe(2);
  });
});
