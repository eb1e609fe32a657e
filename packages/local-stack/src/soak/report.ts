// The report of `pnpm soak`: throughput and latency per request kind, errors by status, memory
// per service, and the verdict (memory flat, no server errors, every kind served, every
// acknowledged write found afterwards), as JSON for tools and as text for people.
import type { KindStats, RequestKind, VerifyReport } from "../mixed-load/model.js";
import type { ServiceName } from "../names.js";
import type { RssSummary } from "./rss.js";

/**
 * A service's heap after full collections (service-kit's redline_nodejs_heap_used_after_major_gc_bytes,
 * the floor per window) may grow at most this much per minute after the warm-up. A flat service wanders
 * by well under 1 MiB/min, while a leak of one small object per request at the soak's rate
 * already shows as several MiB/min.
 */
export const HEAP_SLOPE_LIMIT_MIB_PER_MIN = 1;

/**
 * The RSS floor slope past which growth is reported. RSS is not the verdict's measure while the
 * heap is sampled: V8 keeps the pages of a heap it grew (a gateway's RSS floor rose 14 MiB/min
 * for minutes with its heap after GC flat at 62 MiB), so RSS growth with a flat heap is listed
 * as a note for a person to look at; without a heap sample, RSS is judged as before. (The heap
 * in use is no better: the gateway's floor of it rose 11 MiB/min with garbage V8 had not yet
 * collected.)
 */
export const RSS_SLOPE_LIMIT_MIB_PER_MIN = 1;

/** Memory is judged only when at least this many minutes of samples follow the warm-up. */
export const MIN_JUDGED_MINUTES = 2;

/**
 * Server errors the soak accepts: none. With the offline engine and no fault injected, a 5xx
 * (or an answer that never came) is a defect; the fault tests own the documented 503/504s.
 */
export const ACCEPTED_SERVER_ERRORS: ReadonlySet<string> = new Set();

/** Figures of one request kind over the measured span. */
export interface KindFigures extends KindStats {
  /** Requests sent per second, and acknowledged (2xx) per second. */
  perSecond: number;
  acknowledgedPerSecond: number;
}

export interface SoakReport {
  /** Options the run had. */
  minutes: number;
  clients: number;
  ratePerClient: number;
  sampleSeconds: number;
  startedAt: string;
  /** Seconds of load measured. */
  durationSeconds: number;
  /** 1, 5 and 15 minute load average of the machine at the end (it may be shared). */
  loadAverage: number[];
  throughput: { perSecond: number; acknowledgedPerSecond: number };
  kinds: Partial<Record<RequestKind, KindFigures>>;
  /** Non-2xx answers of every kind by status ("timeout", "network" included). */
  errorsByStatus: Record<string, number>;
  /** Minutes excluded from the memory slope at the start. */
  warmupMinutes: number;
  rss: Record<ServiceName, RssSummary>;
  /** Heap after the last full GC per service (from its GET /metrics), summarized like `rss`. */
  heap: Partial<Record<ServiceName, RssSummary>>;
  /** Every RSS sample per service as [seconds since the load started, MiB]. */
  rssSamples: Record<ServiceName, [number, number][]>;
  /** Every heap sample per service as [seconds since the load started, MiB]. */
  heapSamples: Record<ServiceName, [number, number][]>;
  verify: VerifyReport;
  verdict: {
    pass: boolean;
    /**
     * "flat": every judged slope under the limit; "growing": one is not; "not judged": too few
     * minutes after the warm-up. A service's heap slope is judged; its RSS slope only when it has
     * no heap figure.
     */
    memory: "flat" | "growing" | "not judged";
    slopeLimitMiBPerMin: number;
    /** Each failed check as a sentence; empty on a pass. */
    problems: string[];
    /** What a person should look at without failing the run: RSS growing while the heap stays flat. */
    notes: string[];
  };
}

/** Whether a non-2xx status counts as a server error: 5xx, or no answer at all. */
export function isServerError(status: string): boolean {
  return status === "timeout" || status === "network" || /^5\d\d$/.test(status);
}

/**
 * The verdict of a soak: a problem for every service not sampled or restarted, every heap slope
 * (or RSS slope, for a service without heap samples) at or over the limit (when judged), every
 * server error not accepted, every kind of `expected` with no acknowledged request, and every
 * problem verify() found; a note for every RSS slope over the limit beside a flat heap.
 */
export function soakVerdict(
  report: Pick<SoakReport, "kinds" | "errorsByStatus" | "rss" | "verify"> & Partial<Pick<SoakReport, "heap">>,
  expected: readonly RequestKind[],
  opts: { judgedMinutes: number; slopeLimit?: number } = { judgedMinutes: 0 },
): SoakReport["verdict"] {
  const limit = opts.slopeLimit ?? HEAP_SLOPE_LIMIT_MIB_PER_MIN;
  const problems: string[] = [];
  const notes: string[] = [];
  const judged = opts.judgedMinutes >= MIN_JUDGED_MINUTES;
  let growing = false;
  for (const [name, rss] of Object.entries(report.rss)) {
    if (rss.samples === 0) problems.push(`${name}: no memory sample (no live process listed)`);
    if (rss.restarts > 0) problems.push(`${name}: restarted ${rss.restarts} time(s) during the soak`);
    if (!judged) continue;
    const heap = report.heap?.[name as ServiceName];
    const rssGrows = rss.slopeMiBPerMin !== null && rss.slopeMiBPerMin >= limit;
    const rssFigure = `RSS grows ${rss.slopeMiBPerMin?.toFixed(2)} MiB/min after the warm-up`;
    if (heap?.slopeMiBPerMin == null) {
      // No heap figure (metrics off, scrapes failed): RSS is all there is to judge by.
      if (rssGrows) {
        growing = true;
        problems.push(`${name}: ${rssFigure} (limit ${limit} MiB/min)`);
      }
    } else if (heap.slopeMiBPerMin >= limit) {
      growing = true;
      problems.push(
        `${name}: heap after GC grows ${heap.slopeMiBPerMin.toFixed(2)} MiB/min after the warm-up (limit ${limit} MiB/min)`,
      );
    } else if (rssGrows) {
      notes.push(
        `${name}: ${rssFigure} while the heap after GC stays flat (${heap.slopeMiBPerMin.toFixed(2)} MiB/min): V8 keeping pages, or native memory`,
      );
    }
  }
  for (const [status, count] of Object.entries(report.errorsByStatus)) {
    if (isServerError(status) && !ACCEPTED_SERVER_ERRORS.has(status))
      problems.push(`${count} request(s) answered ${status}`);
  }
  for (const kind of expected) {
    if (!report.kinds[kind]?.acknowledged) problems.push(`${kind}: no request acknowledged`);
  }
  problems.push(...report.verify.problems);
  return {
    pass: problems.length === 0,
    memory: !judged ? "not judged" : growing ? "growing" : "flat",
    slopeLimitMiBPerMin: limit,
    problems,
    notes,
  };
}

const fixed = (x: number, digits = 1) => x.toFixed(digits);

/** The report as text: throughput, a table of kinds, errors, a table of services, the verdict. */
export function formatSoakReport(r: SoakReport): string {
  const lines: string[] = [];
  lines.push(
    `Redline soak: ${r.clients} clients at <= ${r.ratePerClient} req/s each for ${fixed(r.durationSeconds / 60, 2)} min (loopback), load average ${r.loadAverage.map((l) => fixed(l)).join(" ")}`,
  );
  lines.push(
    `throughput: ${fixed(r.throughput.perSecond)} req/s sent, ${fixed(r.throughput.acknowledgedPerSecond)} req/s acknowledged`,
  );
  lines.push("");
  lines.push(
    `${"kind".padEnd(17)}${"req/s".padStart(8)}${"count".padStart(8)}${"p50 ms".padStart(9)}${"p99 ms".padStart(9)}  errors`,
  );
  for (const [kind, k] of Object.entries(r.kinds)) {
    const errors = Object.entries(k.errorsByStatus)
      .map(([s, n]) => `${s}×${n}`)
      .join(" ");
    lines.push(
      `${kind.padEnd(17)}${fixed(k.perSecond, 2).padStart(8)}${String(k.count).padStart(8)}${String(k.p50Ms).padStart(9)}${String(k.p99Ms).padStart(9)}  ${errors || "-"}`,
    );
  }
  const errors = Object.entries(r.errorsByStatus);
  lines.push(`errors by status: ${errors.length ? errors.map(([s, n]) => `${s}: ${n}`).join(", ") : "none"}`);
  lines.push("");
  lines.push(
    `memory (VmRSS, MiB; slope of the floor, the lowest sample per window, after a ${fixed(r.warmupMinutes)} min warm-up; limit ${r.verdict.slopeLimitMiBPerMin} MiB/min on the heap below)`,
  );
  lines.push(
    `${"service".padEnd(11)}${"start".padStart(8)}${"end".padStart(8)}${"peak".padStart(8)}${"MiB/min".padStart(10)}${"samples".padStart(9)}${"restarts".padStart(10)}`,
  );
  const row = (name: string, m: RssSummary) =>
    `${name.padEnd(11)}${fixed(m.startMiB).padStart(8)}${fixed(m.endMiB).padStart(8)}${fixed(m.peakMiB).padStart(8)}${(m.slopeMiBPerMin === null ? "-" : fixed(m.slopeMiBPerMin, 2)).padStart(10)}${String(m.samples).padStart(9)}${String(m.restarts).padStart(10)}`;
  for (const [name, m] of Object.entries(r.rss)) lines.push(row(name, m));
  lines.push("");
  lines.push("heap after full GC (from each service's GET /metrics, MiB; slope of the floor; the judged figure)");
  for (const [name, m] of Object.entries(r.heap)) if (m) lines.push(row(name, m));
  lines.push("");
  const v = r.verify;
  lines.push(
    `checked afterwards: ${v.checked.saves} saves, ${v.checked.syncChats} sync chats, ${v.checked.jobs} jobs, ${v.checked.uploads} uploads, billing of ${v.checked.keys} keys`,
  );
  lines.push(
    `verdict: ${r.verdict.pass ? "PASS" : "FAIL"} (memory ${r.verdict.memory}${r.verdict.problems.length ? `; ${r.verdict.problems.length} problem(s)` : ""})`,
  );
  for (const p of r.verdict.problems) lines.push(`  - ${p}`);
  for (const n of r.verdict.notes) lines.push(`  note: ${n}`);
  return lines.join("\n");
}
