// The record outbox (issue #10, nothing acknowledged lost): a sync turn that committed its edits
// but whose settle (billing) or AppendTurn (sessions) did not answer in time is not answered with
// a 5xx, which a client would retry into a second edit and a second charge. It is answered with
// what it did, and what it still owes is kept here, in the agent's own database, for the relay
// to repeat until it lands: both calls are idempotent per charge key, so a repeat of one that
// did land (a frozen service answering late) changes nothing.

import { sessionsV1 } from "@redline/grpc-stubs";
import {
  backlogGaugesOnScrape,
  type CallOpts,
  counter,
  type Logger,
  METRICS_PREFIX,
  RedlineError,
  SpanKind,
  traceparentOf,
  UnavailableError,
  withSpan,
} from "@redline/service-kit";
import { TURN_RECORD_RELAY_MS_DEFAULT } from "../config.js";
import type { AgentContext } from "../context.js";
import { T, type TurnRecordRow } from "../db/tables.js";

/** What a committed turn still owes: its settle and, for a chat turn, its session record. */
export interface OwedRecord {
  chargeKey: string;
  /** Operations to settle at (0 releases the hold). */
  operations: number;
  /** The AppendTurn to make; undefined when the turn has no session record (re-edit). */
  append?: sessionsV1.AppendTurnRequest;
}

/** Rows one relay pass claims; the rest wait for the next pass. */
const CLAIM_BATCH = 20;
/** How long a claimed row is left to its relay before another may claim it (a relay died mid-row). */
const CLAIM_LEASE_SECONDS = 60;
/** The longest wait between two attempts of one row, in seconds. */
const MAX_BACKOFF_SECONDS = 60;
/** Per-call timeout of the relay's settle and AppendTurn, in ms. */
const RELAY_CALL_TIMEOUT_MS = 10_000;

const relayed = counter(
  `${METRICS_PREFIX}turn_records_relayed_total`,
  "Committed sync turns whose settle and record the outbox relay completed after the turn was answered.",
);

/**
 * Keeps `owed` for the relay, with the principal, request id and trace of `opts` (the turn's own
 * calls), and marks its session owed (a turn on it lands the record first: landOwedRecords). A
 * second write of the same charge key is a no-op. Throws when the agent's database cannot take it
 * (the caller then has nothing durable to answer on).
 */
export async function queueTurnRecord(
  ctx: Pick<AgentContext, "db" | "owedSessions">,
  opts: CallOpts,
  owed: OwedRecord,
): Promise<void> {
  if (!opts.principal) throw new Error("a turn record needs the turn's principal");
  await ctx
    .db(T.turnRecords)
    .insert({
      charge_key: owed.chargeKey,
      session_id: owed.append?.sessionId ?? null,
      operations: owed.operations,
      append_request: owed.append ? JSON.stringify(sessionsV1.AppendTurnRequest.toJSON(owed.append)) : null,
      principal: JSON.stringify(opts.principal),
      request_id: opts.requestId ?? "",
      traceparent: traceparentOf(opts.trace) ?? null,
    })
    .onConflict("charge_key")
    .ignore();
  if (owed.append) ctx.owedSessions.add(owed.append.sessionId);
}

/**
 * Lands what is owed for `sessionId` before a turn on it runs (prepareTurn), so its record takes
 * its place in the history ahead of the new turn's: a Set lookup when nothing is owed there, as
 * on almost every turn. UnavailableError (503, Retry-After 2) while a record is still owed (its
 * service still away, or another agent's relay holding it).
 */
export async function landOwedRecords(ctx: AgentContext, sessionId: string): Promise<void> {
  if (!ctx.owedSessions.has(sessionId)) return;
  await finishRows(ctx, await claim(ctx, "r.session_id = ?", [sessionId]));
  const [{ n }] = await ctx.db(T.turnRecords).where({ session_id: sessionId }).count<{ n: string }[]>({ n: "*" });
  if (Number(n) === 0) {
    ctx.owedSessions.delete(sessionId);
    return;
  }
  throw new UnavailableError("This session's previous turn is still being recorded; retry shortly", {
    retryAfterSeconds: 2,
  });
}

/**
 * Claims the rows matching `where` (a SQL condition on the row `r`, with `bindings`), oldest
 * first, at most CLAIM_BATCH: FOR UPDATE SKIP LOCKED, so agents share the work, and each claimed
 * row is left alone for CLAIM_LEASE_SECONDS (a relay that died mid-row is taken over after).
 */
async function claim(ctx: AgentContext, where: string, bindings: readonly unknown[]): Promise<TurnRecordRow[]> {
  const { rows } = await ctx.db.raw<{ rows: TurnRecordRow[] }>(
    `update ${T.turnRecords}
        set next_attempt_at = now() + make_interval(secs => ?), attempts = attempts + 1
      where charge_key in (select r.charge_key from ${T.turnRecords} r
                            where ${where}
                            order by r.created_at
                            limit ? for update skip locked)
      returning *`,
    [CLAIM_LEASE_SECONDS, ...bindings, CLAIM_BATCH],
  );
  // RETURNING does not keep the subquery's order.
  return rows.sort((a, b) => a.created_at.getTime() - b.created_at.getTime());
}

/**
 * A row the relay's pass takes: due, and the oldest owed of its session (a later one recorded
 * first would take the older turn's place in the history).
 */
const DUE = `r.next_attempt_at <= now()
  and not exists (select 1 from ${T.turnRecords} o where o.session_id = r.session_id and o.created_at < r.created_at)`;

/**
 * One relay pass: reads which sessions are owed a record (ctx.owedSessions, also those another
 * agent queued), then claims up to CLAIM_BATCH rows that are due and finishes them (finishRows).
 * Returns how many rows it completed. Throws only when the database itself fails.
 */
export async function relayTurnRecordsOnce(ctx: AgentContext): Promise<number> {
  const { rows: owed } = await ctx.db.raw<{ rows: { session_id: string | null; due: boolean }[] }>(
    `select session_id, bool_or(next_attempt_at <= now()) as due from ${T.turnRecords} group by session_id`,
  );
  ctx.owedSessions.clear();
  for (const row of owed) if (row.session_id !== null) ctx.owedSessions.add(row.session_id);
  if (!owed.some((row) => row.due)) return 0;
  return finishRows(ctx, await claim(ctx, DUE, []));
}

/**
 * Settles and records each claimed row in turn (oldest first), deleting it once both landed; a
 * row that failed again waits a doubling backoff (1 s to MAX_BACKOFF_SECONDS), and the later rows
 * of its session wait with it, unattempted; a row a service refuses (a 4xx but 408 and 429) is
 * dropped and logged. Returns how many rows it completed.
 */
async function finishRows(ctx: AgentContext, rows: TurnRecordRow[]): Promise<number> {
  let done = 0;
  /** Sessions whose older record failed in this pass, with its backoff (s): their later ones wait with it. */
  const blocked = new Map<string, number>();
  const retryIn = (row: TurnRecordRow, seconds: number, attempted: boolean, err?: unknown) =>
    ctx
      .db(T.turnRecords)
      .where({ charge_key: row.charge_key })
      .update({
        ...(attempted ? { last_error: err instanceof Error ? err.message.slice(0, 500) : String(err) } : {}),
        // A row handed back unattempted keeps its count of attempts.
        attempts: attempted ? row.attempts : row.attempts - 1,
        next_attempt_at: ctx.db.raw("now() + make_interval(secs => ?)", [seconds]),
      });
  for (const row of rows) {
    const waiting = row.session_id === null ? undefined : blocked.get(row.session_id);
    if (waiting !== undefined) {
      // Recorded before the older turn, it would take that turn's place in the history.
      await retryIn(row, waiting, false);
      continue;
    }
    try {
      await relayOne(ctx, row);
      await ctx.db(T.turnRecords).where({ charge_key: row.charge_key }).delete();
      relayed.inc();
      done++;
      ctx.log.info({ chargeKey: row.charge_key, attempts: row.attempts }, "turn settled and recorded by the outbox");
    } catch (err) {
      if (refused(err)) {
        // No repeat can succeed (the session was deleted meanwhile): kept, the row would be
        // retried and alerted on for ever. The turn's edits and charge stand; its messages do not.
        await ctx.db(T.turnRecords).where({ charge_key: row.charge_key }).delete();
        ctx.log.error({ err, chargeKey: row.charge_key }, "turn record refused; dropped from the outbox");
        continue;
      }
      const backoff = Math.min(MAX_BACKOFF_SECONDS, 2 ** Math.min(row.attempts - 1, 6));
      await retryIn(row, backoff, true, err);
      if (row.session_id !== null) blocked.set(row.session_id, backoff);
      ctx.log.warn({ err, chargeKey: row.charge_key, attempts: row.attempts }, "turn record still owed");
    }
  }
  return done;
}

/** Whether `err` is a service's refusal of the call (a 4xx but 408 and 429), which no repeat changes. */
function refused(err: unknown): boolean {
  if (!(err instanceof RedlineError)) return false;
  const status = err.httpStatus;
  return status >= 400 && status < 500 && status !== 408 && status !== 429;
}

/** Settles and records one owed turn, as the turn's principal and inside the turn's trace. */
async function relayOne(ctx: AgentContext, row: TurnRecordRow): Promise<void> {
  await withSpan(
    "agent.record_outbox",
    { kind: SpanKind.INTERNAL, traceparent: row.traceparent, attributes: { "redline.charge_key": row.charge_key } },
    async (_span, trace) => {
      const opts: CallOpts = {
        principal: row.principal,
        requestId: row.request_id || undefined,
        timeoutMs: RELAY_CALL_TIMEOUT_MS,
        trace,
      };
      await ctx.billing.settleOperations({ chargeKey: row.charge_key, operations: row.operations }, opts);
      if (row.append_request !== null)
        await ctx.sessions.appendTurn(sessionsV1.AppendTurnRequest.fromJSON(row.append_request), opts);
    },
  );
}

/**
 * Runs relayTurnRecordsOnce `periodMs` (default TURN_RECORD_RELAY_MS_DEFAULT) after the end of
 * the last pass until the returned stop (which waits for a pass under way) is called, and
 * reports redline_turn_records_owed and redline_turn_records_oldest_age_seconds on scrape. A
 * pass that fails (the database down) is logged and the next one tries again.
 */
export function startTurnRecordRelay(ctx: AgentContext, log: Logger, periodMs = TURN_RECORD_RELAY_MS_DEFAULT) {
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> | undefined;
  const pass = async () => {
    try {
      await relayTurnRecordsOnce(ctx);
    } catch (err) {
      if (!stopped) log.warn({ err }, "record outbox pass failed");
    }
  };
  // The next pass is timed from the end of the last, so a slow one (the database down) never stacks up.
  const schedule = () => {
    if (stopped) return;
    timer = setTimeout(() => {
      running = pass().finally(schedule);
    }, periodMs);
    timer.unref();
  };
  schedule();
  const stopGauges = backlogGaugesOnScrape(
    async () =>
      (
        await ctx.db.raw<{ rows: { count: number; age: number | null }[] }>(
          `select count(*)::int as count, extract(epoch from now() - min(created_at))::float8 as age from ${T.turnRecords}`,
        )
      ).rows[0] ?? { count: 0, age: null },
    {
      name: `${METRICS_PREFIX}turn_records_owed`,
      help: "Committed sync turns whose settle or session record is still owed (the agent's record outbox).",
    },
    {
      name: `${METRICS_PREFIX}turn_records_oldest_age_seconds`,
      help: "Age of the oldest owed turn record; 0 when none is owed.",
    },
  );
  return async () => {
    stopped = true;
    clearTimeout(timer);
    stopGauges();
    await running;
  };
}
