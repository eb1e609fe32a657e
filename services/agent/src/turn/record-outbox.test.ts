// The record outbox (turn/record-outbox.ts) on the real agent database against real billing and
// sessions services started in-process: rows queued once per charge key, relayed as the turn's
// principal oldest first (read back through billing's usage and the sessions' histories), kept
// with a doubling backoff while sessions is stopped (the session's later rows waiting with them),
// dropped when refused, and landed before the next turn on their session.
import { randomUUID } from "node:crypto";
import { sessionsV1 } from "@redline/grpc-stubs";
import { type CallOpts, required, UnavailableError } from "@redline/service-kit";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import type { AgentContext } from "../context.js";
import { T, type TurnRecordRow } from "../db/tables.js";
import { type AgentDependencies, agentTestContext, closeContext, startAgentDependencies, until } from "../testing.js";
import { reserve } from "./ledger.js";
import {
  landOwedRecords,
  type OwedRecord,
  queueTurnRecord,
  relayTurnRecordsOnce,
  startTurnRecordRelay,
} from "./record-outbox.js";

let deps: AgentDependencies;
let ctx: AgentContext;
/** The test's caller: a new billing account each test, so its usage starts at 0. */
let opts: CallOpts;

beforeAll(async () => {
  deps = await startAgentDependencies("record_outbox");
  ctx = await agentTestContext("record_outbox", deps.addrs);
});
afterAll(async () => {
  await closeContext(ctx);
  await deps.close();
});
beforeEach(async () => {
  await ctx.db(T.turnRecords).delete();
  ctx.owedSessions.clear();
  opts = { principal: await deps.newPrincipal(), requestId: "req-outbox" };
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

/** A new session of the caller's. */
async function newSession(): Promise<string> {
  const sessionId = `s_${randomUUID().slice(0, 8)}`;
  await ctx.sessions.ensureSession({ sessionId }, opts);
  return sessionId;
}
/** The user messages of the session's turns, in order (each owed record's is its charge key). */
const turnsOf = async (sessionId: string) =>
  (await ctx.sessions.getHistory({ sessionId }, opts)).messages
    .filter((m) => m.sender === "user")
    .map((m) => m.content);
/** The caller's operations used this period, holds counted (billing's GetUsage). */
const used = async () => required((await ctx.billing.getUsage({}, opts)).usage, "usage").monthlyUsed;

function owed(chargeKey: string, sessionId: string | null, operations = 1): OwedRecord {
  return {
    chargeKey,
    operations,
    append:
      sessionId === null
        ? undefined
        : sessionsV1.AppendTurnRequest.fromPartial({
            turnKey: chargeKey,
            sessionId,
            userMessage: chargeKey,
            aiMessage: "a",
          }),
  };
}

/**
 * Holds each record's charge (as its turn did), then queues them in order, each created a
 * millisecond after the last (the relay orders by created_at).
 */
async function queue(...records: OwedRecord[]): Promise<void> {
  for (const [i, record] of records.entries()) {
    await reserve(ctx, opts, record.chargeKey);
    await queueTurnRecord(ctx, opts, record);
    await ctx
      .db(T.turnRecords)
      .where({ charge_key: record.chargeKey })
      .update({ created_at: ctx.db.raw(`now() - interval '1 minute' + interval '${i} millisecond'`) });
  }
}

const rows = () => ctx.db<TurnRecordRow>(T.turnRecords).orderBy("created_at");
const row = async (chargeKey: string) => (await rows()).find((r) => r.charge_key === chargeKey);
const makeDue = () => ctx.db(T.turnRecords).update({ next_attempt_at: ctx.db.raw("now()") });
/** What a failed AppendTurn leaves as the row's last error while sessions is stopped. */
const SESSIONS_DOWN = /AppendTurn is unavailable/;

describe("queueTurnRecord", () => {
  it("stores the owed settle and record with the turn's principal and request id, once per charge key", async () => {
    const sessionId = await newSession();
    await queueTurnRecord(ctx, opts, owed("chat:q1", sessionId, 2));
    await queueTurnRecord(ctx, opts, owed("chat:q1", sessionId, 5));
    const stored = await rows();
    expect(stored).toHaveLength(1);
    expect(stored[0]).toMatchObject({
      charge_key: "chat:q1",
      session_id: sessionId,
      operations: 2,
      principal: opts.principal,
      request_id: "req-outbox",
      attempts: 0,
      last_error: null,
    });
    expect(ctx.owedSessions.has(sessionId)).toBe(true);
  });

  it("refuses a record without the turn's principal, storing nothing", async () => {
    await expect(queueTurnRecord(ctx, { requestId: "r" }, owed("chat:q2", "s_any"))).rejects.toThrow(/principal/);
    expect(await rows()).toEqual([]);
  });
});

describe("relayTurnRecordsOnce", () => {
  it("settles then records each due row as the turn's principal, oldest first per session, and deletes it", async () => {
    const a = await newSession();
    const b = await newSession();
    await queue(owed("chat:r1", a), owed("chat:r2", b, 3), owed("re-edit:r3", null, 1), owed("chat:r4", a));
    expect(await used()).toBe(4);
    // A pass takes the oldest owed row of each session; r4 waits for r1 to be gone (next pass).
    expect(await relayTurnRecordsOnce(ctx)).toBe(3);
    expect((await rows()).map((r) => r.charge_key)).toEqual(["chat:r4"]);
    expect(await relayTurnRecordsOnce(ctx)).toBe(1);
    expect(await rows()).toEqual([]);
    // Settled at each row's operations (r2's hold of 1 grew to 3), on the turn's account.
    expect(await used()).toBe(6);
    // Recorded in the turn's sessions (another owner's would be NOT_FOUND), in order; a re-edit
    // owes no session record.
    expect(await turnsOf(a)).toEqual(["chat:r1", "chat:r4"]);
    expect(await turnsOf(b)).toEqual(["chat:r2"]);
    expect(await relayTurnRecordsOnce(ctx)).toBe(0);
  });

  it("keeps a row whose service is down with a backoff, and its session's later rows wait unattempted", async () => {
    const a = await newSession();
    // The re-edit needs only billing: it lands while sessions is away.
    await queue(owed("chat:b1", a), owed("chat:b2", a), owed("re-edit:b3", null, 2));
    await deps.sessions.stop();
    // One pass takes only the oldest row of each session: b2 is not due while b1 is owed.
    expect(await relayTurnRecordsOnce(ctx)).toBe(1);
    const first = await row("chat:b1");
    expect(first).toMatchObject({ attempts: 1, last_error: expect.stringMatching(SESSIONS_DOWN) });
    expect((first?.next_attempt_at.getTime() ?? 0) - Date.now()).toBeGreaterThan(0);
    expect(await row("chat:b2")).toMatchObject({ attempts: 0, last_error: null });
    expect(await row("re-edit:b3")).toBeUndefined();

    // Not due again yet: a pass claims nothing.
    expect(await relayTurnRecordsOnce(ctx)).toBe(0);
    expect(await row("chat:b1")).toMatchObject({ attempts: 1 });

    // Due again and still down: the backoff doubles (1 s, then 2 s).
    await makeDue();
    await relayTurnRecordsOnce(ctx);
    const second = await row("chat:b1");
    expect(second?.attempts).toBe(2);
    const waitMs = (second?.next_attempt_at.getTime() ?? 0) - Date.now();
    expect(waitMs).toBeGreaterThan(1_000);
    expect(waitMs).toBeLessThanOrEqual(2_100);

    // Back: the session's rows land in their order, each once.
    await deps.sessions.start();
    await until(async () => {
      await makeDue();
      return (await relayTurnRecordsOnce(ctx)) === 1;
    });
    await makeDue();
    expect(await relayTurnRecordsOnce(ctx)).toBe(1);
    expect(await rows()).toEqual([]);
    expect(await turnsOf(a)).toEqual(["chat:b1", "chat:b2"]);
  });

  it("holds a later row claimed in the same pass as its failing elder, without counting an attempt", async () => {
    const a = await newSession();
    await queue(owed("chat:h1", a), owed("chat:h2", a));
    await deps.sessions.stop();
    // landOwedRecords claims every row of the session at once, not only the oldest.
    ctx.owedSessions.add(a);
    await expect(landOwedRecords(ctx, a)).rejects.toBeInstanceOf(UnavailableError);
    expect(await row("chat:h1")).toMatchObject({ attempts: 1, last_error: expect.stringMatching(SESSIONS_DOWN) });
    expect(await row("chat:h2")).toMatchObject({ attempts: 0, last_error: null });
  });

  it("drops a row a service refuses (a 4xx), and goes on with the rest", async () => {
    // Sessions answers NOT_FOUND for a session it does not know (e.g. deleted meanwhile).
    await queue(owed("chat:x1", `s_gone_${randomUUID().slice(0, 8)}`), owed("chat:x2", await newSession()));
    expect(await relayTurnRecordsOnce(ctx)).toBe(1);
    expect(await rows()).toEqual([]);
  });
});

describe("landOwedRecords", () => {
  it("is a no-op for a session this instance knows nothing is owed on", async () => {
    const a = await newSession();
    await queue(owed("chat:l0", a, 3));
    ctx.owedSessions.clear();
    await landOwedRecords(ctx, a);
    expect(await rows()).toHaveLength(1);
    // Neither settled (the hold of 1 would have grown to 3) nor recorded.
    expect(await used()).toBe(1);
    expect(await turnsOf(a)).toEqual([]);
  });

  it("lands the session's owed records before the turn, oldest first, and forgets the session", async () => {
    const a = await newSession();
    const other = await newSession();
    await queue(owed("chat:l1", a), owed("chat:l2", other), owed("chat:l3", a));
    await landOwedRecords(ctx, a);
    expect(await turnsOf(a)).toEqual(["chat:l1", "chat:l3"]);
    expect(ctx.owedSessions.has(a)).toBe(false);
    expect((await rows()).map((r) => r.charge_key)).toEqual(["chat:l2"]);
  });

  it("answers 503 with Retry-After 2 while the record is still owed", async () => {
    const a = await newSession();
    await queue(owed("chat:l4", a));
    await deps.billing.stop();
    const err = await landOwedRecords(ctx, a).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(UnavailableError);
    expect((err as UnavailableError).httpStatus).toBe(503);
    expect((err as UnavailableError).headers).toMatchObject({ "Retry-After": "2" });
    expect(ctx.owedSessions.has(a)).toBe(true);
    expect(await turnsOf(a)).toEqual([]);
  });
});

describe("startTurnRecordRelay", () => {
  it("relays owed rows on its period until stopped", async () => {
    const a = await newSession();
    await queue(owed("chat:p1", a));
    const stop = startTurnRecordRelay(ctx, ctx.log, 50);
    await until(async () => (await rows()).length === 0, 5_000);
    expect(await turnsOf(a)).toEqual(["chat:p1"]);
    await stop();
    await queue(owed("chat:p2", a));
    await new Promise((r) => setTimeout(r, 200));
    expect((await rows()).map((r) => r.charge_key)).toEqual(["chat:p2"]);
  });
});
