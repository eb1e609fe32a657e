// Resident memory of a stack's service processes over a soak: sampled from /proc/<pid>/status
// (VmRSS) of the processes the supervisor lists in stack.json, so a restarted service is
// followed to its new process, and summarized per service as start, end, peak and the
// least-squares slope after a warm-up.
import { readFileSync } from "node:fs";
import { SERVICE_NAMES, type ServiceName } from "../names.js";
import { readStackFile } from "../stack-file.js";
import { slope } from "../stats.js";

/**
 * One memory reading of one service: when (epoch ms), which process, and `kib` — its resident
 * set (RssSampler) or the heap its last full collection left (HeapSampler in soak-heap.ts).
 */
export interface RssSample {
  at: number;
  pid: number;
  /** Process start time (/proc clock ticks), to tell a restarted process from one reusing the pid. */
  startTime: number | null;
  /** KiB: VmRSS here, heap after the last full GC in a heap sample. */
  kib: number;
}

/** VmRSS of a /proc/<pid>/status text in KiB; null when the line is absent (a zombie has none). */
export function parseVmRssKiB(status: string): number | null {
  const m = /^VmRSS:\s+(\d+)\s+kB$/m.exec(status);
  return m ? Number(m[1]) : null;
}

/** VmRSS of process `pid` in KiB; null when it is gone or has no resident set. */
export function readRssKiB(pid: number): number | null {
  try {
    return parseVmRssKiB(readFileSync(`/proc/${pid}/status`, "utf8"));
  } catch {
    return null;
  }
}

/**
 * Samples every service of the stack whose stack.json is in `dataDir` each `intervalMs`,
 * re-reading the file each time (the supervisor rewrites it when it restarts a service).
 */
export class RssSampler {
  readonly samples = new Map<ServiceName, RssSample[]>(SERVICE_NAMES.map((name) => [name, []]));
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly dataDir: string,
    private readonly intervalMs = 5_000,
  ) {}

  /** Takes one sample of every service now; a service with no live process is skipped this time. */
  sample(at = Date.now()): void {
    const children = readStackFile(this.dataDir)?.children ?? {};
    for (const name of SERVICE_NAMES) {
      const child = children[name];
      if (!child) continue;
      const kib = readRssKiB(child.pid);
      if (kib !== null) this.samples.get(name)?.push({ at, pid: child.pid, startTime: child.startTime, kib });
    }
  }

  /** Samples now and then every interval until stop(). */
  start(): void {
    this.sample();
    this.timer = setInterval(() => this.sample(), this.intervalMs);
  }

  /** Stops sampling after one last sample. */
  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    this.sample();
  }
}

/** Memory of one service over the soak, MiB. */
export interface RssSummary {
  samples: number;
  startMiB: number;
  endMiB: number;
  peakMiB: number;
  /** New processes seen after the first (the supervisor restarted the service). */
  restarts: number;
  /**
   * Least-squares slope of the RSS floor over time after the warm-up, in MiB per minute: the
   * lowest sample of each of at least 4 windows (each at most a minute) of the process that ran
   * longest after the warm-up (a restart starts small, which would hide a leak). The floor is
   * what is left after the garbage collector ran: V8's sawtooth swings RSS by tens of MiB, which
   * a fit over every sample mistakes for growth or shrinkage, while a leak raises the floor.
   * null when fewer than 3 such samples exist.
   */
  slopeMiBPerMin: number | null;
  /** Minutes of samples the slope was fitted over. */
  slopeOverMin: number;
}

const MIB = 1024;

/** Summarizes one service's samples; `warmupUntil` (epoch ms) ends the warm-up excluded from the slope. */
export function summarizeRss(samples: readonly RssSample[], warmupUntil: number): RssSummary {
  if (samples.length === 0)
    return { samples: 0, startMiB: 0, endMiB: 0, peakMiB: 0, restarts: 0, slopeMiBPerMin: null, slopeOverMin: 0 };
  // Consecutive samples of one process form one run.
  const runs: RssSample[][] = [];
  for (const s of samples) {
    const last = runs.at(-1)?.at(-1);
    if (last && last.pid === s.pid && last.startTime === s.startTime) runs.at(-1)?.push(s);
    else runs.push([s]);
  }
  const afterWarmup = runs.map((run) => run.filter((s) => s.at >= warmupUntil));
  const longest = afterWarmup.reduce((a, b) => (b.length > a.length ? b : a), [] as RssSample[]);
  const fitted = longest.length >= 3;
  return {
    samples: samples.length,
    startMiB: samples[0].kib / MIB,
    endMiB: samples[samples.length - 1].kib / MIB,
    peakMiB: Math.max(...samples.map((s) => s.kib)) / MIB,
    restarts: runs.length - 1,
    slopeMiBPerMin: fitted ? slope(floorOf(longest).map((s) => ({ x: s.at / 60_000, y: s.kib / MIB }))) : null,
    slopeOverMin: fitted ? (longest[longest.length - 1].at - longest[0].at) / 60_000 : 0,
  };
}

/** The lowest sample of each window of `run` (at least 4 windows, each at most a minute long). */
export function floorOf(run: readonly RssSample[]): RssSample[] {
  const first = run[0].at;
  const span = run[run.length - 1].at - first;
  const windowMs = Math.max(1, Math.min(60_000, span / 4));
  const lowest = new Map<number, RssSample>();
  for (const s of run) {
    // The last sample closes the last window rather than opening one of its own.
    const w = Math.min(Math.floor((s.at - first) / windowMs), Math.max(0, Math.ceil(span / windowMs) - 1));
    const low = lowest.get(w);
    if (!low || s.kib < low.kib) lowest.set(w, s);
  }
  return [...lowest.values()].sort((a, b) => a.at - b.at);
}
