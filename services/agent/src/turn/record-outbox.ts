// The record outbox (issue #10, nothing acknowledged lost): a sync turn that committed its edits
// but whose settle (billing) or AppendTurn (sessions) did not answer in time is not answered with
// a 5xx, which a client would retry into a second edit and a second charge. It is answered with
// what it did, and what it still owes is kept here, in the agent's own database, for the relay
// to repeat until it lands: both calls are idempotent per charge key, so a repeat of one that
// did land (a frozen service answering late) changes nothing.

import { sessionsV1 } from "@redline/grpc-stubs";
import {
  type CallOpts,
  counter,
  gaugeOnScrape,
  type Knex,
  type Logger,
  METRICS_PREFIX,
  type Principal,
  RedlineError,
  SpanKind,
  traceparentOf,
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
 * calls). A second write of the same charge key is a no-op. Throws when the agent's database
 * cannot take it (the caller then has nothing durable to answer on).
 */
export async function queueTurnRecord(db: Knex, opts: CallOpts, owed: OwedRecord): Promise<void> {
  if (!opts.principal) throw new Error("a turn record needs the turn's principal");
  await db(T.turnRecords)
    .insert({
      charge_key: owed.chargeKey,
      operations: owed.operations,
      append_request: owed.append ? JSON.stringify(sessionsV1.AppendTurnRequest.toJSON(owed.append)) : null,
      principal: JSON.stringify(opts.principal),
      request_id: opts.requestId ?? "",
      traceparent: traceparentOf(opts.trace) ?? null,
    })
    .onConflict("charge_key")
    .ignore();
}

/**
 * One relay pass: claims up to CLAIM_BATCH rows that are due (FOR UPDATE SKIP LOCKED, so agents
 * share the work), settles and records each, deletes it once both landed, and schedules a row
 * that failed again with a doubling backoff (1 s to MAX_BACKOFF_SECONDS); a row a service refuses
 * (a 4xx but 408 and 429) is dropped and logged. Returns how many rows it completed. Throws only when the database
 * itself fails.
 */
export async function relayTurnRecordsOnce(ctx: AgentContext): Promise<number> {
  const { rows } = await ctx.db.raw<{ rows: TurnRecordRow[] }>(
    `update ${T.turnRecords}
        set next_attempt_at = now() + make_interval(secs => ?), attempts = attempts + 1
      where charge_key in (select charge_key from ${T.turnRecords}
                            where next_attempt_at <= now()
                            order by created_at
                            limit ? for update skip locked)
      returning *`,
    [CLAIM_LEASE_SECONDS, CLAIM_BATCH],
  );
  let done = 0;
  for (const row of rows) {
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
      await ctx
        .db(T.turnRecords)
        .where({ charge_key: row.charge_key })
        .update({
          last_error: err instanceof Error ? err.message.slice(0, 500) : String(err),
          next_attempt_at: ctx.db.raw("now() + make_interval(secs => ?)", [backoff]),
        });
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
        principal: row.principal as Principal,
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
 * the last pass until the returned stop (which waits for a pass under way) is called, and reports redline_turn_records_owed and
 * redline_turn_records_oldest_age_seconds on scrape. A pass that fails (the database down) is
 * logged and the next one tries again.
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
  let owed: Promise<{ count: number; age: number }> | undefined;
  // One query feeds both gauges, as the job queue's do.
  const read = () => {
    owed ??= ctx.db
      .raw<{ rows: { count: number; age: number | null }[] }>(
        `select count(*)::int as count, extract(epoch from now() - min(created_at))::float8 as age from ${T.turnRecords}`,
      )
      .then((res) => ({ count: res.rows[0]?.count ?? 0, age: Math.max(0, res.rows[0]?.age ?? 0) }))
      .finally(() => {
        setImmediate(() => {
          owed = undefined;
        });
      });
    return owed;
  };
  const stopGauges = [
    gaugeOnScrape(
      `${METRICS_PREFIX}turn_records_owed`,
      "Committed sync turns whose settle or session record is still owed (the agent's record outbox).",
      [],
      async (add) => add({}, (await read()).count),
    ),
    gaugeOnScrape(
      `${METRICS_PREFIX}turn_records_oldest_age_seconds`,
      "Age of the oldest owed turn record; 0 when none is owed.",
      [],
      async (add) => add({}, (await read()).age),
    ),
  ];
  return async () => {
    stopped = true;
    clearTimeout(timer);
    for (const stop of stopGauges) stop();
    await running;
  };
}
