// JavaScript memory of a stack's services over a soak, read from each service's own GET /metrics
// (service-kit's nodejs_heap_used_after_major_gc_bytes, on the METRICS_ADDR the supervisor lists
// in stack.json). RSS alone cannot tell a leak from V8 growing its heap and keeping the pages,
// nor can the heap in use (it counts garbage V8 lets pile up for minutes as it widens its
// limits); the heap a full collection leaves can.
import { METRICS_PREFIX } from "@redline/service-kit";
import { SERVICE_NAMES, type ServiceName } from "../names.js";
import { readStackFile } from "../stack-file.js";
import type { RssSample } from "./rss.js";

/** A scrape that takes longer than this is skipped (the sample is missing, not late). */
const SCRAPE_TIMEOUT_MS = 4_000;

/**
 * The heap left by the last full collection in KiB from a Prometheus text exposition of
 * service-kit's registry; null when the gauge is absent (metrics off) or still 0 (no full
 * collection yet: a heap is never empty).
 */
export function parseHeapKiB(metricsText: string): number | null {
  const m = new RegExp(
    `^${METRICS_PREFIX}nodejs_heap_used_after_major_gc_bytes (\\d+(?:\\.\\d+)?(?:e\\+?\\d+)?)$`,
    "m",
  ).exec(metricsText);
  return m && Number(m[1]) > 0 ? Number(m[1]) / 1024 : null;
}

/**
 * Samples the heap of every service of the stack whose stack.json is in `dataDir` each
 * `intervalMs`, re-reading the file each time (a restarted service is followed to its new
 * process; the pid and start time come from the file, as in RssSampler).
 */
export class HeapSampler {
  readonly samples = new Map<ServiceName, RssSample[]>(SERVICE_NAMES.map((name) => [name, []]));
  private timer: NodeJS.Timeout | undefined;
  private pending: Promise<void> = Promise.resolve();

  constructor(
    private readonly dataDir: string,
    private readonly intervalMs = 5_000,
  ) {}

  /** Scrapes every service once now; a service that does not answer in time is skipped this time. */
  async sample(at = Date.now()): Promise<void> {
    const info = readStackFile(this.dataDir);
    if (!info) return;
    await Promise.all(
      SERVICE_NAMES.map(async (name) => {
        const child = info.children[name];
        const addr = info.metrics?.[name];
        if (!child || !addr) return;
        try {
          const res = await fetch(`http://${addr}/metrics`, { signal: AbortSignal.timeout(SCRAPE_TIMEOUT_MS) });
          const kib = res.ok ? parseHeapKiB(await res.text()) : null;
          if (kib !== null) this.samples.get(name)?.push({ at, pid: child.pid, startTime: child.startTime, kib });
        } catch {
          // Gone or too slow this time: no sample, as RssSampler does for a process without VmRSS.
        }
      }),
    );
    for (const list of this.samples.values()) list.sort((a, b) => a.at - b.at);
  }

  /** Samples now and then every interval until stop(); a scrape still running skips the next tick. */
  start(): void {
    let busy = false;
    const tick = () => {
      if (busy) return;
      busy = true;
      this.pending = this.sample().finally(() => {
        busy = false;
      });
    };
    tick();
    this.timer = setInterval(tick, this.intervalMs);
  }

  /** Stops sampling after one last sample. */
  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    await this.pending;
    await this.sample();
  }
}
