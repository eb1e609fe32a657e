// The turn's ledger (turn/ledger.ts) against real billing and sessions services started in-process
// and the real agent database: what is held, settled, released and recorded (read back through
// billing's usage and the session's history), what is waited out while a service is stopped and
// restarted, and what a committed sync turn leaves to the record outbox when it cannot finish.
import { randomUUID } from "node:crypto";
import { setTimeout as sleep } from "node:timers/promises";
import { billingV1, sessionsV1 } from "@redline/grpc-stubs";
import { type CallOpts, createLogger, RemoteError, required } from "@redline/service-kit";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { SYNC_HOLD_MARGIN_MS } from "../config.js";
import type { AgentContext } from "../context.js";
import { T, type TurnRecordRow } from "../db/tables.js";
import {
  type AgentDependencies,
  agentTestContext,
  closeContext,
  startAgentDependencies,
  TEST_HOLD_SWEEP_MS,
  until,
} from "../testing.js";
import {
  appendRequestOf,
  billedOperations,
  finishSyncTurn,
  finishTurn,
  heldUsage,
  release,
  reserve,
  SETTLE_PATIENCE_MS,
  type TurnRecord,
  withReservation,
} from "./ledger.js";
import { landOwedRecords } from "./record-outbox.js";

let deps: AgentDependencies;
let ctx: AgentContext;
/** The test's caller: a new billing account each test, so its usage starts at 0. */
let opts: CallOpts;
const log = createLogger("ledger-test", "silent");

beforeAll(async () => {
  deps = await startAgentDependencies("ledger");
  ctx = await agentTestContext("ledger", deps.addrs);
});
afterAll(async () => {
  await closeContext(ctx);
  await deps.close();
});
beforeEach(async () => {
  opts = { principal: await deps.newPrincipal(), requestId: "req-ledger" };
  ctx.cfg.turnRecordWaitMs = undefined;
});
afterEach(async () => {
  // A test that stopped a service: back, and answering the agent's own clients, before the next.
  await Promise.all([deps.billing.start(), deps.sessions.start()]);
  await until(async () => {
    await ctx.billing.getUsage({}, opts);
    await ctx.sessions.ensureSession({ sessionId: "probe" }, opts);
    return true;
  });
});

/** The caller's operations used this period, holds counted (billing's GetUsage). */
const used = async () => required((await ctx.billing.getUsage({}, opts)).usage, "usage").monthlyUsed;
/** A new session of the caller's. */
async function newSession(): Promise<string> {
  const sessionId = `s_${randomUUID().slice(0, 8)}`;
  await ctx.sessions.ensureSession({ sessionId }, opts);
  return sessionId;
}
/** The session's messages as "sender: content", in order. */
const history = async (sessionId: string) =>
  (await ctx.sessions.getHistory({ sessionId }, opts)).messages.map((m) => `${m.sender}: ${m.content}`);
const owedRows = (chargeKey: string) => ctx.db<TurnRecordRow>(T.turnRecords).where({ charge_key: chargeKey });
/** Stops billing, and starts it again on its address `ms` later: `back` settles then. */
async function billingDownFor(ms: number): Promise<{ back: Promise<void> }> {
  await deps.billing.stop();
  return { back: sleep(ms).then(() => deps.billing.start()) };
}

function record(chargeKey: string, sessionId: string): TurnRecord {
  return {
    chargeKey,
    operations: 2,
    sessionId,
    userMessage: "Tighten clause 4",
    reply: "Done.",
    checkpointVersionId: randomUUID(),
    documentId: randomUUID(),
    versionId: randomUUID(),
    title: "Lease",
    remember: false,
    memoryKey: "",
  };
}

describe("billedOperations", () => {
  it("bills nothing for no change, 1 for a change, 1 more per 25 sections", () => {
    expect(billedOperations(3, 0)).toBe(0);
    expect(billedOperations(0, 1)).toBe(1);
    expect(billedOperations(24, 5)).toBe(1);
    expect(billedOperations(25, 5)).toBe(2);
    expect(billedOperations(50, 5)).toBe(3);
  });
});

describe("holds", () => {
  it("reserve holds one operation under the charge key, released by billing once the hold expiry given passes", async () => {
    const started = Date.now();
    expect((await reserve(ctx, opts, "chat:k1", 1_500)).monthlyUsed).toBe(1);
    // One hold per charge key: a repeat holds nothing more.
    expect((await reserve(ctx, opts, "chat:k1", 1_500)).monthlyUsed).toBe(1);
    // Without an expiry, a hold lasts until settled.
    expect((await reserve(ctx, opts, "chat:k1-open")).monthlyUsed).toBe(2);
    await until(async () => (await used()) === 1, 10_000);
    expect(Date.now() - started).toBeGreaterThanOrEqual(1_450);
    await sleep(3 * TEST_HOLD_SWEEP_MS);
    expect(await used()).toBe(1);
  });

  it("heldUsage reports a hold as no charge, keeping the monthly figures", async () => {
    const held = await reserve(ctx, opts, "chat:k-usage");
    expect(heldUsage(held)).toEqual({ ...held, wasBillable: false, opsCharged: 0, bucketUsed: "none" });
    expect(heldUsage(billingV1.Usage.fromPartial({ monthlyUsed: 9, opsCharged: 1 }))).toMatchObject({
      monthlyUsed: 9,
      wasBillable: false,
      opsCharged: 0,
      bucketUsed: "none",
    });
  });

  it("withReservation holds for the sync hold expiry and leaves the settle to the turn when it succeeds", async () => {
    const out = await withReservation(ctx, { opts, log }, "chat:k2", async (held) => held.monthlyUsed * 10);
    expect(out).toBe(10);
    // Still held: the turn settles it (finishSyncTurn), else billing releases it at its expiry.
    expect(await used()).toBe(1);
    const expiryMs = ctx.cfg.aiTimeoutMs + SYNC_HOLD_MARGIN_MS;
    const now = Date.now();
    try {
      await ctx.billing.setTestClock({ now: new Date(now + expiryMs - 30_000) });
      await sleep(3 * TEST_HOLD_SWEEP_MS);
      expect(await used()).toBe(1);
      await ctx.billing.setTestClock({ now: new Date(now + expiryMs + 1_000) });
      await until(async () => (await used()) === 0, 5_000);
    } finally {
      await ctx.billing.setTestClock({});
    }
  });

  it("withReservation releases the hold (settles at 0) when the turn throws, and rethrows", async () => {
    const failure = new Error("engine failed");
    await expect(
      withReservation(ctx, { opts, log }, "chat:k3", async () => {
        expect(await used()).toBe(1);
        throw failure;
      }),
    ).rejects.toBe(failure);
    expect(await used()).toBe(0);
  });

  it("withReservation holds nothing and runs nothing when the quota is spent", async () => {
    // A plan that grants no operations: billing refuses every reservation.
    opts = { principal: await deps.newPrincipal("none"), requestId: "req-ledger" };
    let ran = false;
    await expect(
      withReservation(ctx, { opts, log }, "chat:k4", async () => {
        ran = true;
      }),
    ).rejects.toMatchObject({ httpStatus: 429 });
    expect(ran).toBe(false);
    expect(await used()).toBe(0);
  });
});

describe("release", () => {
  it("waits out a restarting billing (UNAVAILABLE) and settles once it answers", async () => {
    await reserve(ctx, opts, "chat:r1");
    const { back } = await billingDownFor(1_000);
    const started = Date.now();
    await release(ctx, opts, "chat:r1", log);
    // Settled by the call itself, not left to the background retry.
    expect(Date.now() - started).toBeGreaterThanOrEqual(900);
    expect(Date.now() - started).toBeLessThan(SETTLE_PATIENCE_MS);
    await back;
    expect(await used()).toBe(0);
  });

  it("never throws: a settle still failing past its patience is retried in the background", async () => {
    await reserve(ctx, opts, "chat:r2");
    await deps.billing.stop();
    const started = Date.now();
    await release(ctx, opts, "chat:r2", log, 3);
    expect(Date.now() - started).toBeGreaterThan(SETTLE_PATIENCE_MS - 4_000);
    await deps.billing.start();
    await until(async () => (await used()) === 3, 45_000);
  }, 90_000);

  it("never throws on a refusal either (a call without the turn's principal)", async () => {
    await expect(release(ctx, { requestId: "req-ledger" }, "chat:r3", log)).resolves.toBeUndefined();
  });
});

describe("finishTurn", () => {
  it("settles at the billed operations and records the turn keyed by its charge key, once each", async () => {
    const sessionId = await newSession();
    await reserve(ctx, opts, "job:f1");
    const rec = record("job:f1", sessionId);
    const out = await finishTurn(ctx, opts, rec);
    expect(out.usage).toMatchObject({ monthlyUsed: 2, opsCharged: 2, wasBillable: true });
    // A repeat (a worker retrying the job) charges and records nothing more.
    expect(await finishTurn(ctx, opts, rec)).toMatchObject({ usage: { monthlyUsed: 2 }, turnIndex: out.turnIndex });
    expect(await history(sessionId)).toEqual(["user: Tighten clause 4", "ai: Done."]);
    expect(appendRequestOf(rec)).toMatchObject({ turnKey: "job:f1", aiMessage: "Done.", attach: undefined });
  });

  it("retries the settle while billing is down and then finishes", async () => {
    const sessionId = await newSession();
    await reserve(ctx, opts, "job:f2");
    const { back } = await billingDownFor(1_000);
    const started = Date.now();
    const out = await finishTurn(ctx, opts, record("job:f2", sessionId));
    expect(Date.now() - started).toBeGreaterThanOrEqual(900);
    await back;
    expect(out.usage.monthlyUsed).toBe(2);
    expect(await history(sessionId)).toHaveLength(2);
  });
});

describe("finishSyncTurn", () => {
  const owedOf = (rec: TurnRecord) => ({
    chargeKey: rec.chargeKey,
    operations: rec.operations,
    append: appendRequestOf(rec),
  });

  it("answers with the settled usage and the turn index when both land, owing nothing", async () => {
    const rec = record("chat:s1", await newSession());
    const held = await reserve(ctx, opts, "chat:s1");
    const out = await finishSyncTurn(ctx, { opts, log }, owedOf(rec), held);
    expect(out.usage).toMatchObject({ monthlyUsed: 2, opsCharged: 2, wasBillable: true });
    expect(out.turnIndex).toEqual(expect.any(Number));
    expect(await history(rec.sessionId)).toHaveLength(2);
    expect(await owedRows("chat:s1")).toEqual([]);
    expect(ctx.owedSessions.has(rec.sessionId)).toBe(false);
  });

  it("queues the record when sessions stays down past the wait, answering with the settled usage", async () => {
    ctx.cfg.turnRecordWaitMs = 400;
    const rec = record("chat:s2", await newSession());
    const held = await reserve(ctx, opts, "chat:s2");
    await deps.sessions.stop();
    const started = Date.now();
    const out = await finishSyncTurn(ctx, { opts, log }, owedOf(rec), held);
    expect(Date.now() - started).toBeLessThan(3_000);
    expect(out.usage).toMatchObject({ monthlyUsed: 2, opsCharged: 2 });
    expect(out.turnIndex).toBeNull();
    const [row] = await owedRows("chat:s2");
    expect(row).toMatchObject({
      session_id: rec.sessionId,
      operations: 2,
      principal: opts.principal,
      request_id: "req-ledger",
      attempts: 0,
    });
    expect(sessionsV1.AppendTurnRequest.fromJSON(row?.append_request)).toEqual(appendRequestOf(rec));
    expect(ctx.owedSessions.has(rec.sessionId)).toBe(true);

    // Nothing lost: once sessions is back, the next turn on the session lands the record first.
    await deps.sessions.start();
    await until(async () => {
      await landOwedRecords(ctx, rec.sessionId);
      return true;
    });
    expect(await history(rec.sessionId)).toEqual(["user: Tighten clause 4", "ai: Done."]);
  });

  it("answers with the held usage when billing is the one down, and is cut by the caller's deadline", async () => {
    ctx.cfg.turnRecordWaitMs = 60_000;
    const rec = record("chat:s3", await newSession());
    const held = await reserve(ctx, opts, "chat:s3");
    await deps.billing.stop();
    const deadline = new Date(Date.now() + 2_600);
    const out = await finishSyncTurn(ctx, { opts, log, deadline }, owedOf(rec), held);
    // Answered before the caller's deadline (the wait is cut 2 s before it), not after 60 s.
    expect(Date.now()).toBeLessThan(deadline.getTime());
    expect(out).toEqual({ usage: heldUsage(held), turnIndex: expect.any(Number) });
    expect(await owedRows("chat:s3")).toHaveLength(1);
  });

  it("throws a refusal (a session sessions does not know) with nothing queued", async () => {
    const rec = record("chat:s4", `s_unknown_${randomUUID().slice(0, 8)}`);
    const held = await reserve(ctx, opts, "chat:s4");
    const err = await finishSyncTurn(ctx, { opts, log }, owedOf(rec), held).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(RemoteError);
    expect(err).toMatchObject({ httpStatus: 404 });
    expect(await owedRows("chat:s4")).toEqual([]);
  });

  it("queues once per charge key: a repeat of the same owed turn adds no row", async () => {
    ctx.cfg.turnRecordWaitMs = 300;
    const rec = record("chat:s5", await newSession());
    const held = await reserve(ctx, opts, "chat:s5");
    await deps.sessions.stop();
    await finishSyncTurn(ctx, { opts, log }, owedOf(rec), held);
    await finishSyncTurn(ctx, { opts, log }, owedOf(rec), held);
    expect(await owedRows("chat:s5")).toHaveLength(1);
  });
});
