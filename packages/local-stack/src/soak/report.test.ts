// The soak's verdict: what fails it and what does not.
import { describe, expect, it } from "vitest";
import { HEAP_SLOPE_LIMIT_MIB_PER_MIN, isServerError, MIN_JUDGED_MINUTES, soakVerdict } from "./report.js";
import type { RssSummary } from "./rss.js";

const flat: RssSummary = {
  samples: 100,
  startMiB: 90,
  endMiB: 95,
  peakMiB: 97,
  restarts: 0,
  slopeMiBPerMin: 0.1,
  slopeOverMin: 8,
};
const kindStats = { count: 10, acknowledged: 10, failed: 0, p50Ms: 5, p99Ms: 9, longestWaitMs: 9, errorsByStatus: {} };
const figures = { ...kindStats, perSecond: 1, acknowledgedPerSecond: 1 };

function report(over: Partial<Parameters<typeof soakVerdict>[0]> = {}): Parameters<typeof soakVerdict>[0] {
  return {
    kinds: { sync_chat: figures, save: figures },
    errorsByStatus: {},
    rss: { gateway: flat, documents: flat } as Parameters<typeof soakVerdict>[0]["rss"],
    verify: {
      problems: [],
      checked: { saves: 10, syncChats: 10, jobs: 0, uploads: 0, keys: 1 },
      billingUnverifiable: 0,
      jobStatuses: {},
    },
    ...over,
  };
}
const judged = { judgedMinutes: MIN_JUDGED_MINUTES };

describe("soakVerdict", () => {
  it("passes a clean run with flat memory", () => {
    expect(soakVerdict(report(), ["sync_chat", "save"], judged)).toEqual({
      pass: true,
      memory: "flat",
      slopeLimitMiBPerMin: HEAP_SLOPE_LIMIT_MIB_PER_MIN,
      problems: [],
      notes: [],
    });
  });

  it("judges the heap after GC where there is one: a growing heap fails, RSS growth over a flat heap is a note", () => {
    const rssGrowing = { ...flat, slopeMiBPerMin: 14 };
    const heapGrowing = { ...flat, slopeMiBPerMin: 2.5 };
    const v = soakVerdict(
      report({
        rss: { gateway: rssGrowing, documents: flat } as Parameters<typeof soakVerdict>[0]["rss"],
        heap: { gateway: flat, documents: heapGrowing },
      }),
      ["sync_chat", "save"],
      judged,
    );
    expect(v).toMatchObject({ pass: false, memory: "growing" });
    expect(v.problems).toEqual(["documents: heap after GC grows 2.50 MiB/min after the warm-up (limit 1 MiB/min)"]);
    expect(v.notes).toEqual([
      "gateway: RSS grows 14.00 MiB/min after the warm-up while the heap after GC stays flat (0.10 MiB/min): V8 keeping pages, or native memory",
    ]);
    // Without a heap figure for a service (no scrape answered), its RSS is judged.
    const noHeap = soakVerdict(
      report({ rss: { gateway: rssGrowing, documents: flat } as Parameters<typeof soakVerdict>[0]["rss"], heap: {} }),
      ["save"],
      judged,
    );
    expect(noHeap.problems).toEqual(["gateway: RSS grows 14.00 MiB/min after the warm-up (limit 1 MiB/min)"]);
  });

  it("fails a service whose RSS grows at the limit or more, naming it and its slope", () => {
    const leaking = { ...flat, slopeMiBPerMin: HEAP_SLOPE_LIMIT_MIB_PER_MIN };
    const v = soakVerdict(report({ rss: { ...report().rss, documents: leaking } }), ["sync_chat"], judged);
    expect(v.pass).toBe(false);
    expect(v.memory).toBe("growing");
    expect(v.problems).toEqual([`documents: RSS grows 1.00 MiB/min after the warm-up (limit 1 MiB/min)`]);
  });

  it("does not judge memory on a run too short after the warm-up, but still judges errors", () => {
    const leaking = { ...flat, slopeMiBPerMin: 50 };
    const short = { judgedMinutes: MIN_JUDGED_MINUTES - 0.1 };
    const v = soakVerdict(report({ rss: { ...report().rss, gateway: leaking } }), ["save"], short);
    expect(v).toMatchObject({ pass: true, memory: "not judged" });
    const failing = soakVerdict(report({ errorsByStatus: { "500": 2 } }), ["save"], short);
    expect(failing).toMatchObject({ pass: false, memory: "not judged", problems: ["2 request(s) answered 500"] });
  });

  it("fails on server errors and unanswered requests, not on a client error", () => {
    expect(["500", "503", "504", "timeout", "network"].every(isServerError)).toBe(true);
    expect(["400", "404", "409", "429"].some(isServerError)).toBe(false);
    const v = soakVerdict(report({ errorsByStatus: { "409": 1, "503": 1, timeout: 3 } }), [], judged);
    expect(v.problems).toEqual(["1 request(s) answered 503", "3 request(s) answered timeout"]);
  });

  it("fails a restart, a service never sampled, a kind never acknowledged, and what verify found", () => {
    const v = soakVerdict(
      report({
        rss: {
          gateway: { ...flat, restarts: 2 },
          documents: { ...flat, samples: 0, slopeMiBPerMin: null },
        } as Parameters<typeof soakVerdict>[0]["rss"],
        kinds: { sync_chat: { ...figures, acknowledged: 0 } },
        verify: { ...report().verify, problems: ["client 0: acknowledged save c0-s3 is not in the history"] },
      }),
      ["sync_chat", "upload"],
      judged,
    );
    expect(v.pass).toBe(false);
    expect(v.problems).toEqual([
      "gateway: restarted 2 time(s) during the soak",
      "documents: no memory sample (no live process listed)",
      "sync_chat: no request acknowledged",
      "upload: no request acknowledged",
      "client 0: acknowledged save c0-s3 is not in the history",
    ]);
  });
});
