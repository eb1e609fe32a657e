// (o) observability cost for `pnpm bench o`: tracing alone, and metrics + tracing (OTLP to a
// local sink), on vs both off on the chat path, switched round by round in the same processes,
// with an off-vs-off noise floor: on the deployed shape with one client and with 8 at once
// (judged) and with every service in one process; plus what the collectors burn idle
// (observability-idle.ts). Target: < 3 % of p50.
import { randomUUID } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { request as httpRequest } from "node:http";
import { loadavg, tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import type { LocalInfra } from "@redline/local-infra";
import { quantile, readStackFile, seededRandom, shuffled, startProcessStack } from "@redline/local-stack";
import { initTracing, setMetricsRecording, setTracingRecording } from "@redline/service-kit";
import { startTestStack } from "../../../test/support/stack.js";
import type { BenchResult } from "../bench-ingest.js";
import { idleObservabilityBurn, offHookCostNs, serviceCpuMs, startSpanSink } from "./observability-idle.js";
import { chatClients, chatTurn, LOAD_CLIENTS, OFFLINE, UNLIMITED, UNLIMITED_ENV } from "./shared.js";

/**
 * The settings of (o): [tracing recording, metrics hooks recording, turns sampled out]. A turn
 * sampled out carries a caller's traceparent with flag 00, as a parent-based sampler keeping 1
 * turn in N leaves the other N - 1 (OTEL_TRACES_SAMPLER=parentbased_traceidratio).
 */
const OBSERVABILITY_MODES = {
  on: [true, true, false],
  tracing: [true, false, false],
  sampledOut: [true, true, true],
  off: [false, false, false],
  off2: [false, false, false],
} as const;
type ObservabilityMode = keyof typeof OBSERVABILITY_MODES;
const MODE_NAMES = Object.keys(OBSERVABILITY_MODES) as ObservabilityMode[];

/** Turns before the rounds: a process keeps getting faster for its first ~2,000 (V8 tiering the hot paths up). */
const WARM_TURNS = 2500;
/** Calls of LOAD_CLIENTS turns before (o)'s loaded rounds, on processes already warm. */
const LOADED_WARM_CALLS = 50;
/**
 * Turns per setting and round, back to back: a block's median is steadier than one turn (a GC
 * pause, the machine's neighbours), and only a block's first turn follows a switch.
 */
const BLOCK_TURNS = 8;
/**
 * Pause after a block, long enough for its background work (relay publish, batched rate-limit
 * debit) to end under the block's own setting, before the next one is switched to.
 */
const PAUSE_MS = 40;

/** How (o) drives one stack. */
interface ObservabilityTarget {
  /** Turns each `turn` call runs at once, one per client. */
  clients: number;
  /** One sync chat turn per client at once, each sending `headers()`; each turn's ms. */
  turn(headers?: () => Record<string, string> | undefined): Promise<number[]>;
  /** Switches every process that serves the turns to `mode`. */
  setMode(mode: ObservabilityMode): Promise<void>;
  /** CPU ms used so far by the processes that serve the turns. */
  cpuMs(): number;
  /** Exports the spans ended so far to the sink. */
  flush(): Promise<void>;
}

/** What (o) measured on one stack, per setting: each round's block median and CPU per turn (ms). */
interface ObservabilityRun {
  times: Record<ObservabilityMode, number[]>;
  cpu: Record<ObservabilityMode, number[]>;
  /** Spans the sink received per recorded turn ("on" and "tracing only"; a sampled-out turn records none). */
  spansPerTurn: number;
  /** The machine's load average when the rounds ended. */
  load: number;
}

/** A sampled-out caller's traceparent, a trace of its own per turn. */
function sampledOutHeaders(): Record<string, string> {
  const id = () => randomUUID().replaceAll("-", "");
  return { traceparent: `00-${id()}-${id().slice(0, 16)}-00` };
}

/**
 * `warmCalls` calls of target.turn with everything on, then `rounds` rounds, each running a
 * block of BLOCK_TURNS calls per setting in a fresh random order (seeded by `seed`); a block's
 * median is over every client's turns.
 */
async function observabilityRounds(
  target: ObservabilityTarget,
  sink: { count(): Promise<number> },
  rounds: number,
  seed: number,
  warmCalls = WARM_TURNS,
): Promise<ObservabilityRun> {
  const random = seededRandom(seed);
  const times = Object.fromEntries(MODE_NAMES.map((n) => [n, [] as number[]])) as ObservabilityRun["times"];
  const cpu = Object.fromEntries(MODE_NAMES.map((n) => [n, [] as number[]])) as ObservabilityRun["cpu"];
  await target.setMode("on");
  for (let t = 0; t < warmCalls; t++) await target.turn();
  await target.flush();
  const spansBefore = await sink.count();
  for (let r = 0; r < rounds; r++) {
    for (const mode of shuffled(MODE_NAMES, random)) {
      await target.setMode(mode);
      const started = target.cpuMs();
      const block: number[] = [];
      const headers = OBSERVABILITY_MODES[mode][2] ? sampledOutHeaders : () => undefined;
      for (let t = 0; t < BLOCK_TURNS; t++) block.push(...(await target.turn(headers)));
      await new Promise((resolve) => setTimeout(resolve, PAUSE_MS));
      times[mode].push(quantile(block, 0.5));
      cpu[mode].push((target.cpuMs() - started) / block.length);
    }
  }
  await target.setMode("on");
  await target.flush();
  const spansPerTurn = ((await sink.count()) - spansBefore) / (2 * rounds * BLOCK_TURNS * target.clients);
  return { times, cpu, spansPerTurn, load: loadavg()[0] };
}

/** (o)'s figures of one run: the lines it prints and the per-turn shares the verdict takes. */
function observabilityFigures(run: ObservabilityRun) {
  const { times, cpu } = run;
  const p50 = Object.fromEntries(MODE_NAMES.map((n) => [n, quantile(times[n], 0.5)])) as Record<
    ObservabilityMode,
    number
  >;
  const paired = (mode: ObservabilityMode) => times[mode].map((t, i) => t - times.off[i]);
  const share = (mode: ObservabilityMode) => (quantile(paired(mode), 0.5) / p50.off) * 100;
  // Standard error of a median of per-round differences (1.2533 σ/√n), in % of p50(off).
  const stdErr = (mode: ObservabilityMode) => {
    const d = paired(mode);
    const mean = d.reduce((a, b) => a + b, 0) / d.length;
    const sd = Math.sqrt(d.reduce((a, b) => a + (b - mean) ** 2, 0) / (d.length - 1));
    return ((1.2533 * sd) / Math.sqrt(d.length) / p50.off) * 100;
  };
  const meanCpu = (mode: ObservabilityMode) => cpu[mode].reduce((a, b) => a + b, 0) / cpu[mode].length;
  const cpuShare = (mode: ObservabilityMode) => ((meanCpu(mode) - meanCpu("off")) / meanCpu("off")) * 100;
  const diff = (mode: ObservabilityMode) =>
    `${quantile(paired(mode), 0.5).toFixed(2)} ms (${sign(share(mode))} ± ${stdErr(mode).toFixed(1)}`;
  // Keeping 1 turn in 10 (parentbased_traceidratio 0.1): nine turns sampled out, one recorded.
  const oneInTen = 0.1 * share("on") + 0.9 * share("sampledOut");
  return {
    on: share("on"),
    floor: share("off2"),
    oneInTen,
    lines:
      `block medians' p50 on ${p50.on.toFixed(2)} ms, tracing only ${p50.tracing.toFixed(2)} ms, sampled out ${p50.sampledOut.toFixed(2)} ms, off ${p50.off.toFixed(2)} ms, off2 ${p50.off2.toFixed(2)} ms; ${run.spansPerTurn.toFixed(1)} spans per traced turn exported; load average ${run.load.toFixed(1)}` +
      `\n        median per-round difference to off: on ${diff("on")}), tracing only ${diff("tracing")}), both on with the turn sampled out by its caller ${diff("sampledOut")}; recording 1 turn in 10 ≈ ${sign(oneInTen)}), off2 ${diff("off2")}, noise floor)` +
      `\n        CPU per turn: on ${meanCpu("on").toFixed(2)} ms (${sign(cpuShare("on"))}), tracing only ${meanCpu("tracing").toFixed(2)} ms (${sign(cpuShare("tracing"))}), sampled out ${meanCpu("sampledOut").toFixed(2)} ms (${sign(cpuShare("sampledOut"))}), off ${meanCpu("off").toFixed(2)} ms, off2 ${meanCpu("off2").toFixed(2)} ms (${sign(cpuShare("off2"))})`,
  };
}

/** `x` (a percentage) signed, one decimal: "+3.1 %". */
function sign(x: number): string {
  return `${x >= 0 ? "+" : ""}${x.toFixed(1)} %`;
}

/**
 * (o) on the deployed shape: a `pnpm start` stack (a process per service) whose every service
 * process loads recording-switch.mjs, so each block's setting is switched in the same six
 * processes; spans go over OTLP/HTTP to `sink`; CPU is the six processes' (every thread).
 * `rounds` rounds with one client (`single`), then, on the same warm stack, `loadedRounds` with
 * LOAD_CLIENTS clients at once, (p)'s load (`loaded`).
 */
async function observabilityDeployed(
  infra: LocalInfra,
  sink: { url: string; count(): Promise<number> },
  rounds: number,
  loadedRounds: number,
): Promise<{ single: ObservabilityRun; loaded: ObservabilityRun }> {
  const switches = mkdtempSync(join(tmpdir(), "redline-bench-switch-"));
  const preload = pathToFileURL(join(dirname(fileURLToPath(import.meta.url)), "..", "recording-switch.mjs")).href;
  const stack = await startProcessStack(infra, "bench_obs_deployed", {
    ...OFFLINE,
    ...UNLIMITED_ENV,
    METRICS_ADDR: "",
    OTEL_EXPORTER_OTLP_ENDPOINT: sink.url,
    OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: "",
    NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ""} --import=${preload}`.trim(),
    BENCH_RECORDING_SWITCH_DIR: switches,
  });
  try {
    const pids = Object.values(readStackFile(stack.stack.dataDir)?.children ?? {}).map((c) => c?.pid);
    if (pids.length !== 6 || pids.some((p) => !p)) throw new Error(`(o): expected 6 service processes, got ${pids}`);
    const ask = (path: string) => Promise.all(pids.map((pid) => switchRequest(join(switches, `${pid}.sock`), path)));
    const chatStack = { call: stack.call, billingAddr: stack.stack.addrs.billing };
    const [client] = await chatClients(chatStack, 1, "bench-obs");
    const target: ObservabilityTarget = {
      clients: 1,
      turn: async (headers) => [await chatTurn(stack.call, client, headers?.())],
      async setMode(mode) {
        const [traced, metered] = OBSERVABILITY_MODES[mode];
        const answers = await ask(`/?tracing=${Number(traced)}&metrics=${Number(metered)}`);
        // Each process answers from the module its service set up: a mismatch means the switch
        // reached another copy of service-kit, and the figures would compare nothing.
        if (answers.some((a) => a.tracing !== traced || a.metrics !== metered))
          throw new Error(`(o): a service did not switch to ${mode}: ${JSON.stringify(answers)}`);
      },
      cpuMs: () => [...serviceCpuMs(stack.stack.dataDir).values()].reduce((a, b) => a + b, 0),
      flush: async () => {
        await ask("/flush");
      },
    };
    const single = await observabilityRounds(target, sink, rounds, 0x0b5e);
    const crowd = await chatClients(chatStack, LOAD_CLIENTS, "bench-obs-load");
    const loaded = await observabilityRounds(
      {
        ...target,
        clients: LOAD_CLIENTS,
        turn: (headers) => Promise.all(crowd.map((c) => chatTurn(stack.call, c, headers?.()))),
      },
      sink,
      loadedRounds,
      0x10ad,
      // The processes are warm from the single run; this warms the new clients' sessions.
      LOADED_WARM_CALLS,
    );
    return { single, loaded };
  } finally {
    await stack.stop();
    rmSync(switches, { recursive: true, force: true });
  }
}

/** GET `path` on a recording switch's socket; its JSON answer. */
function switchRequest(socketPath: string, path: string): Promise<{ tracing: boolean; metrics: boolean }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest({ socketPath, path }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("end", () => {
        const text = Buffer.concat(chunks).toString("utf8");
        if (res.statusCode !== 200) reject(new Error(`recording switch ${socketPath}: ${res.statusCode} ${text}`));
        else {
          try {
            resolve(JSON.parse(text));
          } catch (err) {
            reject(err);
          }
        }
      });
    });
    req.on("error", reject);
    req.end();
  });
}

/**
 * (o): the cost of metrics and tracing on the sync chat path, on vs off with a noise floor, A/B
 * in the same processes: each round runs a block of turns per setting in a fresh random order,
 * switched by setTracingRecording and setMetricsRecording: both on, tracing only, both on with
 * every turn sampled out by its caller (what 9 turns in 10 cost when 1 in 10 is kept), and
 * neither twice ("off2" against "off" is the noise floor). Separate stacks per setting could not
 * tell 3 % apart: two identical stacks differed by up to 10 %, a difference of processes, not of
 * settings. Spans are exported over OTLP/HTTP to a sink in another process.
 *
 * Run twice. The verdict takes the deployed shape: a process per service, as `pnpm start` and
 * Kubernetes run them, switched through recording-switch.mjs, with one client (latency on an idle
 * machine) and then with (p)'s LOAD_CLIENTS at once (there the machine's cores are the limit, and
 * p50 grows with the CPU a turn takes, export and collection included). Beside it, every service in the
 * bench's own process (the test stack), the earlier design: there the SDK's code stays hot in one
 * process, while in the deployed shape each process runs its one to three spans a turn between
 * the others' work, with cold caches, and a span costs two to three times as much (the same SDK
 * functions, each slower in the profile). What runs whether requests come or not (prom-client's
 * collectors, the span exporter's timer) is measured apart, as the CPU per second three idle
 * process stacks burn (both on, neither, neither again); the difference as a share of one core
 * is added to the one-client verdict, an upper bound of what it takes from a turn. The verdict
 * needs the one-client noise floor under 1.5 %, and both runs under 3 %.
 */
export async function benchObservabilityOverhead(
  results: BenchResult[],
  infra: LocalInfra,
  rounds = 250,
  loadedRounds = 100,
): Promise<void> {
  // Before tracing is set up in this process: the hook's cost when tracing is off.
  const hookNs = await offHookCostNs();
  const sink = await startSpanSink();
  let deployed: { single: ObservabilityRun; loaded: ObservabilityRun };
  let oneProcess: ObservabilityRun;
  try {
    deployed = await observabilityDeployed(infra, sink, rounds, loadedRounds);
    oneProcess = await observabilityInProcess(infra, sink, rounds);
  } catch (err) {
    sink.close();
    throw err;
  }
  const idle = await idleObservabilityBurn(infra, sink.url);
  sink.close();

  const main = observabilityFigures(deployed.single);
  const loaded = observabilityFigures(deployed.loaded);
  const single = observabilityFigures(oneProcess);
  // Idle CPU in ms per second over 1000 ms per second of one core, in %.
  const background = (idle.on - idle.off) / 10;
  const judged = Math.abs(main.floor) < 1.5;
  const added = main.on + Math.max(0, background);
  // Under load the collectors' background CPU is already inside the turns' latency.
  const addedLoaded = loaded.on;
  results.push({
    name:
      `(o) metrics and tracing on the sync chat path, on vs off switched in the same processes, ${rounds} rounds of ${BLOCK_TURNS} turns per setting after ${WARM_TURNS} warm-up turns` +
      `\n      deployed shape (a process per service), one client: ${main.lines}` +
      `\n      deployed shape, ${LOAD_CLIENTS} clients at once ((p)'s load; ${loadedRounds} rounds, each setting's block ${BLOCK_TURNS} × ${LOAD_CLIENTS} turns): ${loaded.lines}` +
      `\n      every service in one process (the SDK's code hot, for reference): ${single.lines}` +
      `\n      idle, six service processes per stack: on ${idle.on.toFixed(1)} ms/s of CPU, off ${idle.off.toFixed(1)} ms/s, off2 ${idle.off2.toFixed(1)} ms/s: the collectors take ${sign(background)} of one core` +
      `\n      off, one tracing hook (withSpan) costs ${hookNs.toFixed(0)} ns over a direct call`,
    value: judged
      ? `metrics + tracing add ${sign(added)} on the deployed shape with one client (${sign(main.on)} of p50 per turn, ${sign(background)} of a core in the background; recording 1 turn in 10 ≈ ${sign(main.oneInTen + Math.max(0, background))}) and ${sign(addedLoaded)} with ${LOAD_CLIENTS} clients at once (1 in 10 ≈ ${sign(loaded.oneInTen)}); in one process ${sign(single.on + Math.max(0, background))}`
      : `inconclusive on this machine now (noise floor ${sign(main.floor)} of p50)`,
    target: "< 3 % of p50, at one client and under load",
    pass: judged && added < 3 && addedLoaded < 3,
  });
}

/**
 * (o) with every service in the bench's process (the test stack), tracing set up here and
 * exporting to `sink`; CPU is this process's.
 */
async function observabilityInProcess(
  infra: LocalInfra,
  sink: { url: string; count(): Promise<number> },
  rounds: number,
): Promise<ObservabilityRun> {
  const tracing = initTracing("bench", { tracesUrl: `${sink.url}/v1/traces`, serviceName: "redline-bench" });
  const stack = await startTestStack(infra, { name: "bench_obs", rateLimits: UNLIMITED });
  try {
    const [client] = await chatClients({ call: stack.call, billingAddr: stack.addrs.billing }, 1, "bench-obs");
    const target: ObservabilityTarget = {
      clients: 1,
      turn: async (headers) => [await chatTurn(stack.call, client, headers?.())],
      async setMode(mode) {
        const [traced, metered] = OBSERVABILITY_MODES[mode];
        setTracingRecording(traced);
        setMetricsRecording(metered);
      },
      cpuMs() {
        const used = process.cpuUsage();
        return (used.user + used.system) / 1000;
      },
      flush: () => tracing.flush(),
    };
    return await observabilityRounds(target, sink, rounds, 0x0b5e);
  } finally {
    // Later benchmarks in this process run untraced, as before this one.
    setTracingRecording(false);
    setMetricsRecording(true);
    await stack.close();
    await tracing.flush();
  }
}
