// The turn's ledger: what a turn holds, bills and records. Every caller (sync chat, async jobs,
// approval, continue, cancel, re-edit) reserves through withReservation or reserve, and finishes
// through finishTurn, so a charge is settled and a turn recorded the same way everywhere
// (ARCHITECTURE "One chat turn" 2.5; interface-spec Limits: 1 operation, 1 more per 25 sections).
import { setTimeout as sleep } from "node:timers/promises";
import type { billingV1, sessionsV1 } from "@redline/grpc-stubs";
import {
  type CallOpts,
  type Logger,
  RedlineError,
  RemoteError,
  required,
  UnavailableError,
} from "@redline/service-kit";
import { syncHoldExpiryMs, TURN_RECORD_WAIT_MS_DEFAULT } from "../config.js";
import type { AgentContext } from "../context.js";
import { type OwedRecord, queueTurnRecord } from "./record-outbox.js";

/** Sections per extra billed operation (interface-spec Limits: 1 more per 25 sections). */
const SECTIONS_PER_EXTRA_OP = 25;

/** Operations billed for a turn: 1, plus 1 per 25 sections changed; 0 when nothing changed. */
export function billedOperations(sections: number, opsCount: number): number {
  return opsCount > 0 ? 1 + Math.floor(sections / SECTIONS_PER_EXTRA_OP) : 0;
}

/**
 * Holds 1 operation under `chargeKey` (429 when the quota is spent); the usage after it. With
 * `holdExpiryMs` (> 0), billing releases the hold that long after if nothing settled it (a sync
 * turn whose agent died; issue #10); without, the hold lasts until settled (jobs sweep their own).
 */
export async function reserve(
  ctx: AgentContext,
  opts: CallOpts,
  chargeKey: string,
  holdExpiryMs = 0,
): Promise<billingV1.Usage> {
  const res = await ctx.billing.reserveOperations({ chargeKey, operations: 1, holdExpiryMs }, opts);
  return required(res.usage, "usage");
}

/**
 * The usage a hold reports (the 202 of POST /v1/chat/async): a reservation is not a charge, so
 * `was_billable` is false, `ops_charged` 0 and `bucket_used` "none"; the job's result reports the
 * real charge once it is settled. The monthly figures stay billing's as they stand, the hold
 * counted: they decide the next 429 and fill the X-Usage-* headers of the same answer.
 */
export function heldUsage(usage: billingV1.Usage): billingV1.Usage {
  return { ...usage, wasBillable: false, opsCharged: 0, bucketUsed: "none" };
}

/** Retries of a failed release, in the background: billing's database may be restarting (issue #10). */
const RELEASE_RETRY_DELAYS_MS = [1_000, 2_000, 4_000, 8_000, 15_000, 30_000];

/**
 * How long a settle (or a turn's AppendTurn) waits out a service that is down (restarting) before
 * giving up. Both are idempotent per charge key, so retrying is safe; giving up early would leave a
 * committed turn unbilled with its hold stuck, or its version committed without its messages.
 */
export const SETTLE_PATIENCE_MS = 15_000;

/** `call`, retried while its service is unavailable (UNAVAILABLE or a 503) until `giveUpAt` (ms; default SETTLE_PATIENCE_MS from now). */
async function withPatience<T>(call: () => Promise<T>, giveUpAt = Date.now() + SETTLE_PATIENCE_MS): Promise<T> {
  for (let wait = 250; ; wait = Math.min(wait * 2, 2_000)) {
    try {
      return await call();
    } catch (err) {
      const down = err instanceof UnavailableError || (err instanceof RemoteError && err.httpStatus === 503);
      if (!down || Date.now() + wait > giveUpAt) throw err;
      await sleep(wait);
    }
  }
}

/** `settleOperations`, retried while billing is unavailable, for up to SETTLE_PATIENCE_MS. */
function settleWithPatience(
  ctx: AgentContext,
  opts: CallOpts,
  request: { chargeKey: string; operations: number },
): Promise<billingV1.SettleOperationsResponse> {
  return withPatience(() => ctx.billing.settleOperations(request, opts));
}

/**
 * Settles the hold at `operations` (0 releases it), waiting out a restarting billing; never
 * throws. A failure past that is logged and the settle retried in the background (about a minute
 * more), so a billing outage during a failed turn does not leave its hold counted against the
 * quota. A no-op once the key is settled (billing is idempotent per key), so it is safe on any
 * failure path.
 */
export async function release(
  ctx: AgentContext,
  opts: CallOpts,
  chargeKey: string,
  log: Logger,
  operations = 0,
): Promise<void> {
  const attempt = () => ctx.billing.settleOperations({ chargeKey, operations }, { ...opts, timeoutMs: 10_000 });
  try {
    await settleWithPatience(ctx, { ...opts, timeoutMs: 10_000 }, { chargeKey, operations });
  } catch (err) {
    log.error({ err, chargeKey }, "settling the charge failed; retrying in the background");
    void (async () => {
      for (const delay of RELEASE_RETRY_DELAYS_MS) {
        await new Promise((r) => setTimeout(r, delay).unref());
        try {
          await attempt();
          log.info({ chargeKey }, "settled the charge on retry");
          return;
        } catch {
          // still down: the next delay
        }
      }
      log.error({ chargeKey }, "settling the charge failed for good: the hold stays counted");
    })();
  }
}

/** Settles the hold at `operations`, waiting out a restarting billing; the usage after it (errors propagate). */
async function settle(
  ctx: AgentContext,
  opts: CallOpts,
  chargeKey: string,
  operations: number,
): Promise<billingV1.Usage> {
  const settled = await settleWithPatience(ctx, opts, { chargeKey, operations });
  return required(settled.usage, "usage");
}

/**
 * Reserves 1 operation under `chargeKey` (429), runs `run` with the usage after the hold, and
 * releases the hold when it throws: nothing is billed for a failed turn. `run` settles through
 * finishSyncTurn. Sync turns only: the hold expires after syncHoldExpiryMs, so billing
 * releases it should this process die mid-turn (issue #10).
 */
export async function withReservation<T>(
  ctx: AgentContext,
  actor: { opts: CallOpts; log: Logger },
  chargeKey: string,
  run: (held: billingV1.Usage) => Promise<T>,
): Promise<T> {
  const held = await reserve(ctx, actor.opts, chargeKey, syncHoldExpiryMs(ctx.cfg));
  try {
    return await run(held);
  } catch (err) {
    // A turn that committed is billed, whatever failed after: finishSyncTurn settles it itself.
    if (!(err instanceof Object && committedFailures.has(err))) await release(ctx, actor.opts, chargeKey, actor.log);
    throw err;
  }
}

/** Errors of turns that had committed: withReservation leaves their hold to finishSyncTurn. */
const committedFailures = new WeakSet<object>();

/** Whether `err` says a service did not answer (down, restarting, frozen), as against refusing the call. */
function transient(err: unknown): boolean {
  if (err instanceof UnavailableError) return true;
  return err instanceof RedlineError && (err.httpStatus === 503 || err.httpStatus === 504);
}

/** What finishSyncTurn answers: the usage (the hold's when the settle is still owed) and the turn's index. */
export interface FinishedSyncTurn {
  usage: billingV1.Usage;
  /** The turn's index in its session; null when there is no record or it is still owed. */
  turnIndex: number | null;
}

/**
 * Finishes a committed sync turn (chat: settle and AppendTurn; re-edit: settle alone), waiting
 * out a restarting service for up to cfg.turnRecordWaitMs (TURN_RECORD_WAIT_MS_DEFAULT), cut to
 * 2 s before the caller's `deadline`. What did not answer by then goes to the record outbox
 * (queueTurnRecord) and the turn is answered anyway: its edits are committed, and a 5xx would be
 * retried into a second edit and a second charge. The usage is then the hold's (heldUsage: not yet
 * a charge). A refusal (4xx) is thrown as before, the hold released; when even the outbox cannot
 * be written (the agent's database down too), the first error is thrown and the hold settled at
 * `operations` in the background (release), never freed.
 */
export async function finishSyncTurn(
  ctx: AgentContext,
  actor: { opts: CallOpts; log: Logger; deadline?: Date | null },
  owed: OwedRecord,
  held: billingV1.Usage,
): Promise<FinishedSyncTurn> {
  const now = Date.now();
  const wait = ctx.cfg.turnRecordWaitMs ?? TURN_RECORD_WAIT_MS_DEFAULT;
  const giveUpAt = Math.min(now + wait, actor.deadline ? actor.deadline.getTime() - DEADLINE_MARGIN_MS : Infinity);
  // Each attempt is cut to what is left, so a frozen service costs the wait, not a 30 s call.
  const opts = () => ({ ...actor.opts, timeoutMs: Math.max(MIN_CALL_MS, giveUpAt - Date.now()) });
  const [settled, recorded] = await Promise.allSettled([
    withPatience(
      () => ctx.billing.settleOperations({ chargeKey: owed.chargeKey, operations: owed.operations }, opts()),
      giveUpAt,
    ),
    owed.append
      ? withPatience(() => ctx.sessions.appendTurn(owed.append as sessionsV1.AppendTurnRequest, opts()), giveUpAt)
      : undefined,
  ]);
  if (settled.status === "fulfilled" && recorded.status === "fulfilled")
    return { usage: required(settled.value.usage, "usage"), turnIndex: recorded.value?.turnIndex ?? null };
  const failures = [settled, recorded].flatMap((r) => (r.status === "rejected" ? [r.reason as unknown] : []));
  const refused = failures.find((err) => !transient(err));
  if (refused) throw refused;
  try {
    await queueTurnRecord(ctx, actor.opts, owed);
  } catch (err) {
    actor.log.error({ err, chargeKey: owed.chargeKey }, "the record outbox is unavailable; the turn's record is lost");
    void release(ctx, actor.opts, owed.chargeKey, actor.log, owed.operations);
    const first = failures[0];
    if (first instanceof Object) committedFailures.add(first);
    throw first;
  }
  actor.log.warn(
    { chargeKey: owed.chargeKey, err: failures[0] },
    "turn committed; its settle or record is owed to the record outbox",
  );
  return {
    usage: settled.status === "fulfilled" ? required(settled.value.usage, "usage") : heldUsage(held),
    turnIndex: recorded.status === "fulfilled" ? (recorded.value?.turnIndex ?? null) : null,
  };
}

/** How long before the caller's deadline a committed turn stops waiting for its settle and record. */
const DEADLINE_MARGIN_MS = 2_000;
/** The shortest timeout a finishing call gets, even when the wait is spent. */
const MIN_CALL_MS = 250;

/** What finishing a turn settles and records. */
export interface TurnRecord {
  chargeKey: string;
  /** Operations billed (billedOperations); 0 releases the hold. */
  operations: number;
  sessionId: string;
  userMessage: string;
  reply: string;
  /** The version before the turn, its restore point ("" when it had none). */
  checkpointVersionId: string;
  /** The document the turn wrote and its version after; "" when none. */
  documentId: string;
  versionId: string;
  title: string;
  /** The roster attach a loaded document still owes (sessions.v1 RosterAttach). */
  attach?: sessionsV1.RosterAttach;
  /** Whether the instruction joins the memory note `memoryKey` ("" = the account's). */
  remember: boolean;
  memoryKey: string;
  /** The note as the turn read it at its start (sessions detects a concurrent change). */
  memoryNoteSeen?: string;
}

/**
 * Finishes a turn: settles its charge (idempotent per key) and records it with sessions
 * AppendTurn (both messages, checkpoint, roster attach, memory line; idempotent per turn key, the
 * charge key: each turn has its own). The two writes are independent: one round trip, not two.
 * Both wait out a restarting service (issue #10: the document version is committed by now, so its
 * messages must land, exactly once). Returns the usage and the turn's index.
 */
export async function finishTurn(
  ctx: AgentContext,
  opts: CallOpts,
  record: TurnRecord,
): Promise<{ usage: billingV1.Usage; turnIndex: number }> {
  const [usage, turn] = await Promise.all([
    settle(ctx, opts, record.chargeKey, record.operations),
    withPatience(() => ctx.sessions.appendTurn(appendRequestOf(record), opts)),
  ]);
  return { usage, turnIndex: turn.turnIndex };
}

/** The AppendTurn that records `record` (its turn key is the charge key: one per turn). */
export function appendRequestOf(record: TurnRecord): sessionsV1.AppendTurnRequest {
  return {
    turnKey: record.chargeKey,
    sessionId: record.sessionId,
    userMessage: record.userMessage,
    aiMessage: record.reply,
    checkpointVersionId: record.checkpointVersionId,
    durableDocumentId: record.documentId,
    versionId: record.versionId,
    title: record.title,
    attach: record.documentId ? record.attach : undefined,
    remember: record.remember,
    memoryKey: record.memoryKey,
    memoryNoteSeen: record.memoryNoteSeen,
  };
}
