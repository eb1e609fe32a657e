// What (o) measures besides the chat path: a local OTLP sink the spans go to, the CPU the
// collectors burn on an idle stack, each service's CPU time from /proc, and the cost of a
// recording hook that is switched off.
import { spawn } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import type { LocalInfra } from "@redline/local-infra";
import { type ProcessStack, quantile, readStackFile, startProcessStack } from "@redline/local-stack";
import { withSpan } from "@redline/service-kit";
import { OFFLINE } from "./shared.js";

/**
 * An OTLP/HTTP trace sink in a process of its own, so parsing what is exported costs the
 * measured process nothing, as a collector elsewhere would: `url` is the base endpoint, `count`
 * the spans received so far.
 */
export async function startSpanSink(): Promise<{ url: string; count(): Promise<number>; close(): void }> {
  const code = `
    const http = require("node:http");
    let spans = 0;
    const KEY = Buffer.from('"startTimeUnixNano"');
    const server = http.createServer((req, res) => {
      if (req.method === "GET") return res.end(String(spans));
      const chunks = [];
      req.on("data", (c) => chunks.push(c));
      // Spans are counted by a key only a span has (events have "timeUnixNano", links no time),
      // not parsed: parsing half a megabyte a second here competes with the measured process for
      // the machine's cores, which a collector elsewhere does not.
      req.on("end", () => {
        const body = Buffer.concat(chunks);
        for (let at = body.indexOf(KEY); at !== -1; at = body.indexOf(KEY, at + KEY.length)) spans++;
        res.setHeader("Content-Type", "application/json");
        res.end("{}");
      });
    });
    server.listen(0, "127.0.0.1", () => console.log(server.address().port));`;
  const child = spawn(process.execPath, ["-e", code], { stdio: ["ignore", "pipe", "inherit"] });
  const port = await new Promise<string>((resolve, reject) => {
    child.stdout.once("data", (d: Buffer) => resolve(d.toString("utf8").trim()));
    child.once("exit", (c) => reject(new Error(`the span sink exited (${c})`)));
  });
  const url = `http://127.0.0.1:${port}`;
  return {
    url,
    count: async () => Number(await (await fetch(`${url}/count`)).text()),
    close: () => child.kill(),
  };
}

/**
 * CPU per second (ms/s) the six service processes of an idle stack burn: one with metrics and
 * tracing on (spans to `otlpUrl`), one with neither, and a second with neither (the noise
 * floor); a short settle after start, then 8 windows of 4 s with no request, each process's quietest.
 */
export async function idleObservabilityBurn(
  infra: LocalInfra,
  otlpUrl: string,
): Promise<{ on: number; off: number; off2: number }> {
  const noOtel = { OTEL_EXPORTER_OTLP_ENDPOINT: "", OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: "" };
  const envs = {
    on: { ...OFFLINE, ...noOtel, METRICS_ADDR: "", OTEL_EXPORTER_OTLP_ENDPOINT: otlpUrl },
    off: { ...OFFLINE, ...noOtel, METRICS_ADDR: "off" },
    off2: { ...OFFLINE, ...noOtel, METRICS_ADDR: "off" },
  };
  // Each service process ties itself to this one with an exit listener: 18 of them here.
  process.setMaxListeners(Math.max(process.getMaxListeners(), 3 * 6 + 10));
  const stacks: ProcessStack[] = [];
  try {
    for (const [name, env] of Object.entries(envs))
      stacks.push(await startProcessStack(infra, `bench_idle_${name}`, env));
    if (!stacks[0].stack.metrics.gateway || stacks[1].stack.metrics.gateway)
      throw new Error("METRICS_ADDR=off was not applied");
    await new Promise((resolve) => setTimeout(resolve, 5_000));
    // Each process's quietest window, summed: now and then one process burns 20-80 ms in a second
    // (V8 collecting after start-up, whichever the setting), so a stack's quietest window could
    // still hold one of six processes' bursts, which is not what the collectors cost.
    const windows = 8;
    const windowMs = 4_000;
    const rates = stacks.map(() => new Map<string, number>());
    for (let w = 0; w < windows; w++) {
      const before = stacks.map((s) => serviceCpuMs(s.stack.dataDir));
      await new Promise((resolve) => setTimeout(resolve, windowMs));
      for (const [i, s] of stacks.entries())
        for (const [service, ms] of serviceCpuMs(s.stack.dataDir)) {
          const rate = ((ms - (before[i].get(service) ?? ms)) * 1000) / windowMs;
          // Below zero when a thread ended in the window (one run showed -145 ms/s): its CPU left
          // the sum of live threads, so that window says nothing about this process.
          if (rate >= 0) rates[i].set(service, Math.min(rates[i].get(service) ?? rate, rate));
        }
    }
    const [on, off, off2] = rates.map((r) => [...r.values()].reduce((a, b) => a + b, 0));
    return { on, off, off2 };
  } finally {
    await Promise.all(stacks.map((s) => s.stop()));
  }
}

/**
 * CPU ms used so far by each service process in `dataDir`'s stack.json, by service, every thread
 * of each (V8's GC and compiler threads too), from the nanosecond schedstat counters:
 * /proc/<pid>/stat's 10 ms ticks are too coarse for a few ms a second.
 */
export function serviceCpuMs(dataDir: string): Map<string, number> {
  const used = new Map<string, number>();
  for (const [service, child] of Object.entries(readStackFile(dataDir)?.children ?? {})) {
    if (!child) continue;
    let ns = 0;
    try {
      for (const tid of readdirSync(`/proc/${child.pid}/task`))
        ns += Number(readFileSync(`/proc/${child.pid}/task/${tid}/schedstat`, "utf8").split(" ")[0]);
    } catch {
      // gone (or a thread ended between the listing and the read): counted as far as read
    }
    used.set(service, ns / 1e6);
  }
  return used;
}

/**
 * What a tracing hook costs when tracing is off (this process never calls initTracing): an
 * awaited withSpan around a resolved promise vs the same await without it, in ns per call.
 */
export async function offHookCostNs(): Promise<number> {
  const calls = 200_000;
  const work = async () => 1;
  const time = async (fn: () => Promise<number>) => {
    const started = process.hrtime.bigint();
    for (let i = 0; i < calls; i++) await fn();
    return Number(process.hrtime.bigint() - started) / calls;
  };
  const traced = () => withSpan("bench", {}, work);
  await time(work);
  await time(traced);
  const samples = Array.from({ length: 5 }, () => 0);
  for (let i = 0; i < samples.length; i++) samples[i] = (await time(traced)) - (await time(work));
  return quantile(samples, 0.5);
}
