// Issue #10: Postgres restarted, NATS down, S3 down, each under the steady mixed load
// (scripts/lib/mixed-load.ts) on a process stack with its own Postgres, NATS and S3
// (scripts/lib/faults.ts). What clients see during each fault is asserted (503 + Retry-After +
// JSON detail, never a 500 or a hang past the bound), and afterwards that nothing acknowledged
// was lost, every job reached a terminal state and each turn was charged once.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type FaultInfra, type FaultStack, runFault, startFaultInfra, startFaultStack } from "../scripts/lib/faults.js";
import { type LoopKind, MixedLoad, type RequestRecord } from "../scripts/lib/mixed-load.js";

/** The longest a client may wait for any answer during a fault (ms): a hang is a failure. */
const WAIT_BOUND_MS = 15_000;
const CLIENTS = 3;

let infra: FaultInfra;
let stack: FaultStack;

beforeAll(async () => {
  infra = await startFaultInfra();
  stack = await startFaultStack(infra, CLIENTS * 4);
}, 180_000);

afterAll(async () => {
  await stack?.stop();
  await infra?.stop();
}, 60_000);

/** A load of CLIENTS clients on keys [from, from + CLIENTS) of the stack. */
async function loadOn(from: number, loop?: LoopKind[]): Promise<MixedLoad> {
  const load = new MixedLoad({
    url: stack.url,
    keys: stack.keys.slice(from, from + CLIENTS),
    loop,
    ratePerClient: 4,
    requestTimeoutMs: WAIT_BOUND_MS + 5_000,
    streamTimeoutMs: 60_000,
  });
  await load.setup();
  return load;
}

/** Failed answers of `records` that break the rule: every error is JSON {detail}; 503s carry Retry-After; no 500, no hang. */
function badFailures(records: RequestRecord[]): string[] {
  const bad: string[] = [];
  for (const r of records) {
    if (r.acknowledged || r.kind === "stream") continue;
    const what = `${r.kind} → ${r.status} after ${r.latencyMs} ms (${r.detail ?? "no detail"})`;
    if (typeof r.status !== "number") bad.push(`${what}: no answer`);
    else if (r.status >= 500 && r.status !== 503) bad.push(`${what}: not a 503`);
    else if (!r.jsonBody || !r.detail) bad.push(`${what}: no JSON detail`);
    else if (r.status === 503 && !r.retryAfter) bad.push(`${what}: no Retry-After`);
    if (r.latencyMs > WAIT_BOUND_MS) bad.push(`${what}: waited past ${WAIT_BOUND_MS} ms`);
  }
  return bad;
}

describe("mixed load without a fault", () => {
  it("acknowledges every kind and verifies clean", async () => {
    const load = await loadOn(0);
    load.start();
    await new Promise((r) => setTimeout(r, 8_000));
    await load.stop();
    const stats = load.stats();
    for (const kind of [
      "sync_chat",
      "async_chat",
      "stream",
      "save",
      "doc_events",
      "upload",
      "presigned_upload",
    ] as const) {
      expect(stats[kind].acknowledged, kind).toBeGreaterThan(0);
      expect(stats[kind].failed, `${kind} ${JSON.stringify(stats[kind].errorsByStatus)}`).toBe(0);
    }
    const report = await load.verify();
    expect(report.problems).toEqual([]);
    expect(report.checked.jobs).toBeGreaterThan(0);
    expect(report.jobStatuses.completed).toBe(report.checked.jobs);
  }, 120_000);
});
