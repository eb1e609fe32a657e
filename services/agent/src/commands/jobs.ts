// The JobsService commands on plain values (ARCHITECTURE "Async chat jobs"): create, read, list,
// stream replay and cancel. Every read and write is scoped to the caller's owner id.
import { agentV1 } from "@redline/grpc-stubs";
import {
  type CallOpts,
  ConflictError,
  InputError,
  NotFoundError,
  type Principal,
  required,
  traceparentOf,
  UnsupportedMediaTypeError,
} from "@redline/service-kit";
import type { AgentContext, HandedContext, IdleWorker } from "../context.js";
import { countActive, eventsAfter, eventsOf, findJob, insertJob, listJobs } from "../db/store/jobs.js";
import type { JobEventRow, JobRow } from "../db/tables.js";
import { TERMINAL_STATUSES } from "../db/tables.js";
import { markCancelled, requestCancel } from "../jobs/lifecycle.js";
import { settleStoppedJob } from "../jobs/settle.js";
import { jobChargeKey, newJobId } from "../turn/keys.js";
import { heldUsage, release, reserve } from "../turn/ledger.js";
import { turnHistoryLimit } from "../turn/prepare.js";

/** How long a cancel waits for a job running here to stop before answering. */
const CANCEL_WAIT_MS = 10_000;

/** The owner's job; NotFoundError when unknown, cleaned up or another owner's. */
export async function ownJob(ctx: AgentContext, principal: Principal, jobId: string): Promise<JobRow> {
  const row = await findJob(ctx.db, principal.ownerId, jobId);
  if (!row) throw new NotFoundError("Job not found");
  return row;
}

/** A job with its events (none when `compact`). */
export async function jobWithEvents(
  ctx: AgentContext,
  row: JobRow,
  compact: boolean,
): Promise<{ row: JobRow; events: JobEventRow[] }> {
  return { row, events: compact ? [] : await eventsAfter(ctx.db, row.id, 0) };
}

/**
 * POST /v1/chat/async: ensures the session (so its id is known now; 403 for a foreign id),
 * holds one operation under the job's charge key (429 when spent; settled once by whoever
 * finishes the job) and stores the job as pending: handed to an idle worker of this instance
 * with the turn context, else woken for any worker to claim. 400 for an empty message, 415 for
 * an upload ingest does not convert.
 */
export async function createChatJob(
  ctx: AgentContext,
  principal: Principal,
  opts: CallOpts,
  chat: agentV1.ChatRequest | undefined,
): Promise<{ row: JobRow; usage: agentV1.ChatResponse["usage"] }> {
  if (!chat?.message.trim()) throw new InputError("message must not be empty");
  const contentType = chat.upload ? await uploadContentType(ctx, chat.upload.filename, opts) : "";
  const id = newJobId();
  const chargeKey = jobChargeKey(id);
  // With a worker idle here, the job goes straight to it with the turn context read now (the
  // same call that ensures the session), instead of through a claim and a second read.
  const worker = ctx.takeIdleWorker();
  try {
    const { session, usage } = await ensureAndReserve(ctx, opts, chat, chargeKey, worker);
    const sessionId = required(session.session, "session").sessionId;
    const newJob = jobOf(principal, id, chargeKey, { ...chat, sessionId }, contentType, session.created);
    const leasedTo = worker ? { worker: worker.name, leaseMs: ctx.jobsCfg.leaseMs } : undefined;
    const traced = { ...newJob, traceparent: traceparentOf(opts.trace) ?? null };
    const row = await insertJob(ctx.db, traced, leasedTo).catch(async (err) => {
      await release(ctx, opts, chargeKey, ctx.log);
      throw err;
    });
    // With a worker taken, the session call above was GetTurnContext.
    if (worker) worker.start(row, session as HandedContext);
    else ctx.wake();
    return { row, usage: heldUsage(usage) };
  } catch (err) {
    worker?.release();
    throw err;
  }
}

/**
 * The session ensured (GetTurnContext when a worker was taken, else EnsureSession) and the
 * operation held, as two round trips run together; the hold is released when the session is refused.
 */
async function ensureAndReserve(
  ctx: AgentContext,
  opts: CallOpts,
  chat: agentV1.ChatRequest,
  chargeKey: string,
  worker: IdleWorker | null,
) {
  const { sessionId, crossSessionMemoryKey: memoryKey } = chat;
  const [ensured, reserved] = await Promise.allSettled([
    worker
      ? ctx.sessions.getTurnContext({ sessionId, historyLimit: turnHistoryLimit(ctx), memoryKey }, opts)
      : ctx.sessions.ensureSession({ sessionId }, opts),
    reserve(ctx, opts, chargeKey),
  ]);
  if (reserved.status === "rejected") throw reserved.reason;
  if (ensured.status === "rejected") {
    await release(ctx, opts, chargeKey, ctx.log);
    throw ensured.reason;
  }
  return { session: ensured.value, usage: reserved.value };
}

/**
 * The row of a new chat job; its metadata is the spec's Job metadata object. A job loading an
 * upload names the file as an attachment job does: filename, file_size (bytes) and content_type.
 */
function jobOf(
  principal: Principal,
  id: string,
  chargeKey: string,
  chat: agentV1.ChatRequest,
  contentType: string,
  newSession: boolean,
) {
  return {
    id,
    owner_id: principal.ownerId,
    user_id: principal.organizationId ? null : principal.userId,
    organization_id: principal.organizationId || null,
    principal,
    session_id: chat.sessionId,
    job_type: "chat",
    request: agentV1.ChatRequest.toJSON(chat),
    metadata: {
      message: chat.message,
      document_html_provided: chat.documentHtml !== undefined || chat.upload !== undefined,
      ...(chat.upload && {
        filename: chat.upload.filename,
        file_size: chat.upload.content.length,
        content_type: contentType,
      }),
      response_mode: chat.responseMode || "full",
    },
    charge_key: chargeKey,
    state: { newSession },
  };
}

/**
 * The MIME type of an upload by its extension, from ingest's one mapping (ListFormats); 415 at
 * job creation for an extension ingest does not convert (interface-spec Errors rule 1), so the
 * caller is not handed a job that can only fail.
 */
async function uploadContentType(ctx: AgentContext, filename: string, opts: CallOpts): Promise<string> {
  const { extensions, contentTypes } = await ctx.ingest.listFormats({}, opts);
  const dot = filename.lastIndexOf(".");
  const extension = dot > 0 ? filename.slice(dot).toLowerCase() : "";
  if (!extensions.includes(extension)) throw new UnsupportedMediaTypeError(extension, extensions);
  return contentTypes[extension] ?? "application/octet-stream";
}

/** The owner's jobs, most recent first, `limit` clamped to 1..200 (default 50), with their events unless compact. */
export async function listOwnJobs(
  ctx: AgentContext,
  principal: Principal,
  filter: { status: string; sessionId: string; limit: number; compact: boolean },
): Promise<{ rows: JobRow[]; events: Map<string, JobEventRow[]> }> {
  const rows = await listJobs(ctx.db, principal.ownerId, {
    status: filter.status || undefined,
    sessionId: filter.sessionId || undefined,
    limit: Math.min(200, Math.max(1, filter.limit || 50)),
  });
  const ids = rows.map((r) => r.id);
  return { rows, events: filter.compact ? new Map() : await eventsOf(ctx.db, ids) };
}

/** The caller's job and its stored events after `afterSequence`, for the stream's replay. */
export async function jobEventsAfter(ctx: AgentContext, principal: Principal, jobId: string, afterSequence: number) {
  const row = await ownJob(ctx, principal, jobId);
  return { row, events: await eventsAfter(ctx.db, row.id, Math.max(0, afterSequence)) };
}

/** Jobs still open on the session (the revert guard). */
export async function countActiveJobs(ctx: AgentContext, principal: Principal, sessionId: string): Promise<number> {
  return countActive(ctx.db, principal.ownerId, sessionId);
}

function terminalConflict(row: JobRow): ConflictError {
  return new ConflictError(`Job is already ${row.status}`, { code: "job_not_cancellable", status: row.status });
}

/**
 * POST /v1/jobs/{id}/cancel. pending and awaiting_approval stop here at once (staged changes are
 * dropped, applied ones stay); an in_progress job running on this instance is aborted and waited
 * for (`stopped_here`); one running elsewhere gets the cancel flag, which its heartbeat notices
 * (`accepted`). 404 for another owner's job; 409 naming the status for a terminal job (also when
 * it finished meanwhile); 409 job_busy when it kept changing state.
 */
export async function cancelJob(
  ctx: AgentContext,
  principal: Principal,
  jobId: string,
): Promise<{ row: JobRow; stopState: "stopped_here" | "accepted" }> {
  for (let attempt = 0; attempt < 3; attempt++) {
    const row = await ownJob(ctx, principal, jobId);
    if (TERMINAL_STATUSES.includes(row.status)) throw terminalConflict(row);
    if (row.status === "pending" || row.status === "awaiting_approval") {
      const done = await cancelWaiting(ctx, row);
      if (done) return { row: done, stopState: "stopped_here" };
      continue; // a worker claimed it meanwhile
    }
    const local = ctx.running.get(row.id);
    const flagged = await requestCancel(ctx, row.id);
    if (!flagged) continue;
    if (!local) return { row: flagged, stopState: "accepted" };
    local.controller.abort("cancelled");
    await Promise.race([local.done, new Promise((r) => setTimeout(r, CANCEL_WAIT_MS))]);
    const after = await ownJob(ctx, principal, row.id);
    if (after.status !== "cancelled" && TERMINAL_STATUSES.includes(after.status)) throw terminalConflict(after);
    return { row: after, stopState: after.status === "cancelled" ? "stopped_here" : "accepted" };
  }
  throw new ConflictError("The job changed state while cancelling; retry", { code: "job_busy" });
}

/**
 * Cancels a pending or awaiting job. Applied changes stay and are billed and recorded (an
 * approval job's approved changes, a paused long edit's committed part); staged ones are dropped.
 */
async function cancelWaiting(ctx: AgentContext, row: JobRow): Promise<JobRow | null> {
  const cancelled = await markCancelled(ctx, row.id, { status: [row.status] });
  if (!cancelled) return null;
  await settleStoppedJob(
    ctx,
    row,
    {
      applied: (n) => `(Cancelled: ${n} change${n === 1 ? "" : "s"} applied, the rest discarded.)`,
      paused: "(Cancelled at the continue prompt.)",
    },
    ctx.log.child({ jobId: row.id }),
  );
  return cancelled;
}
