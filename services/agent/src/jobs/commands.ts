// The JobsService commands: create, read, list, cancel, stream replay, approval decisions and
// the continue prompt. Every read and write is scoped to the caller's owner id.
import { randomBytes } from "node:crypto";
import { type agentJobsV1, agentV1, type billingV1, type documentsV1, type sessionsV1 } from "@redline/grpc-stubs";
import type { ChunkOperation } from "@redline/html-chunks";
import {
  type CallContext,
  type CallOpts,
  ConflictError,
  InputError,
  NotFoundError,
  type Principal,
  requirePrincipal,
  UnsupportedMediaTypeError,
} from "@redline/service-kit";
import { billedOperations, chunkOpToProto, summarizeOperations, turnHistoryLimit } from "../commands/chat-turn.js";
import type { JobRow, JobState, StagedChange } from "../tables.js";
import { TERMINAL_STATUSES } from "../tables.js";
import { finalEvent, usageEvent } from "./run-job.js";
import type { JobsContext } from "./runtime.js";
import { countActive, eventsAfter, eventsOf, findJob, listJobs, T } from "./store.js";
import { transition } from "./transition.js";
import { jobToProto } from "./view.js";
import { releaseCharge } from "./worker-pool.js";

/** How long a cancel waits for a job running here to stop before answering. */
const CANCEL_WAIT_MS = 10_000;

async function ownJob(ctx: JobsContext, principal: Principal, jobId: string): Promise<JobRow> {
  const row = await findJob(ctx.db, principal.ownerId, jobId);
  if (!row) throw new NotFoundError("Job not found");
  return row;
}

async function view(ctx: JobsContext, row: JobRow, compact: boolean): Promise<agentJobsV1.Job> {
  const events = compact ? [] : await eventsAfter(ctx.db, row.id, 0);
  return jobToProto(row, events, compact);
}

/**
 * POST /v1/chat/async: ensures the session (so its id is known now; 403 for a foreign id),
 * holds one operation under a per-job charge key (429 when spent; settled once by whoever
 * finishes the job) and stores the job as pending: handed to an idle worker of this instance
 * with the turn context, else woken for any worker to claim.
 */
export async function createChatJob(
  ctx: JobsContext,
  call: CallContext,
  req: agentJobsV1.CreateChatJobRequest,
): Promise<agentJobsV1.CreateChatJobResponse> {
  const principal = requirePrincipal(call);
  const chat = req.request;
  if (!chat?.message.trim()) throw new InputError("message must not be empty");
  const opts = call.forward();
  if (chat.upload) await refuseUnsupportedUpload(ctx, chat.upload.filename, opts);
  const id = `job_${randomBytes(12).toString("hex")}`;
  const chargeKey = `job:${id}`;
  // With a worker idle here, the job goes straight to it with the turn context read now (the
  // same call that ensures the session), instead of through a claim and a second read.
  const worker = ctx.takeIdleWorker();
  try {
    // Two independent round trips on the request's critical path: run them together, and
    // release the reservation when the session is refused.
    const [ensuredResult, reservedResult] = await Promise.allSettled([
      worker
        ? ctx.sessions.getTurnContext(
            { sessionId: chat.sessionId, historyLimit: turnHistoryLimit(ctx), memoryKey: chat.crossSessionMemoryKey },
            opts,
          )
        : ctx.sessions.ensureSession({ sessionId: chat.sessionId }, opts),
      ctx.billing.reserveOperations({ chargeKey, operations: 1 }, opts),
    ]);
    if (reservedResult.status === "rejected") throw reservedResult.reason;
    const reserved = reservedResult.value;
    if (ensuredResult.status === "rejected") {
      await ctx.billing.settleOperations({ chargeKey, operations: 0 }, opts).catch(() => {});
      throw ensuredResult.reason;
    }
    const sessionId = ensuredResult.value.session?.sessionId ?? chat.sessionId;
    let row: JobRow;
    try {
      [row] = await ctx
        .db<JobRow>(T.jobs)
        .insert({
          id,
          owner_id: principal.ownerId,
          user_id: principal.organizationId ? null : principal.userId,
          organization_id: principal.organizationId || null,
          principal: JSON.stringify(principal) as unknown as JobRow["principal"],
          session_id: sessionId,
          job_type: "chat",
          status: "pending",
          progress: 0,
          request: JSON.stringify(agentV1.ChatRequest.toJSON({ ...chat, sessionId })),
          metadata: JSON.stringify({
            message: chat.message,
            document_html_provided: chat.documentHtml !== undefined || chat.upload !== undefined,
            ...(chat.upload && { filename: chat.upload.filename, file_size: chat.upload.content.length }),
            response_mode: chat.responseMode || "full",
          }) as unknown as JobRow["metadata"],
          charge_key: chargeKey,
          state: JSON.stringify({ newSession: ensuredResult.value.created }) as unknown as JobRow["state"],
          // Handed to a local worker: leased to it, so no other claims it; if this instance dies
          // first, the lease lapses and any worker picks the job up.
          ...(worker && {
            lease_owner: worker.name,
            lease_expires_at: ctx.db.raw("now() + (? * interval '1 millisecond')", [ctx.jobsCfg.leaseMs]),
          }),
        })
        .returning("*");
    } catch (err) {
      await ctx.billing.settleOperations({ chargeKey, operations: 0 }, opts).catch(() => {});
      throw err;
    }
    // With a worker taken, the session call above was GetTurnContext.
    if (worker) worker.start(row, ensuredResult.value as sessionsV1.GetTurnContextResponse);
    else ctx.wake();
    return { job: jobToProto(row, [], true), usage: reserved.usage };
  } catch (err) {
    worker?.release();
    throw err;
  }
}

/**
 * 415 at job creation for an upload whose extension ingest does not convert (interface-spec
 * Errors rule 1), so the caller is not handed a job that can only fail.
 */
async function refuseUnsupportedUpload(ctx: JobsContext, filename: string, opts: CallOpts): Promise<void> {
  const { extensions } = await ctx.ingest.listFormats({}, opts);
  const dot = filename.lastIndexOf(".");
  const extension = dot > 0 ? filename.slice(dot).toLowerCase() : "";
  if (!extensions.includes(extension)) throw new UnsupportedMediaTypeError(extension, extensions);
}

/** GET /v1/jobs/{id}: NOT_FOUND when unknown, cleaned up or another owner's. */
export async function getJob(
  ctx: JobsContext,
  call: CallContext,
  req: agentJobsV1.GetJobRequest,
): Promise<agentJobsV1.GetJobResponse> {
  const row = await ownJob(ctx, requirePrincipal(call), req.jobId);
  return { job: await view(ctx, row, req.compact) };
}

/** GET /v1/jobs and GET /v1/sessions/{sid}/jobs: most recent first, `limit` 1..200. */
export async function listOwnJobs(
  ctx: JobsContext,
  call: CallContext,
  req: agentJobsV1.ListJobsRequest,
): Promise<agentJobsV1.ListJobsResponse> {
  const principal = requirePrincipal(call);
  const rows = await listJobs(ctx.db, principal.ownerId, {
    status: req.status || undefined,
    sessionId: req.sessionId || undefined,
    limit: Math.min(200, Math.max(1, req.limit || 50)),
  });
  const events = req.compact
    ? new Map()
    : await eventsOf(
        ctx.db,
        rows.map((r) => r.id),
      );
  return { jobs: rows.map((r) => jobToProto(r, events.get(r.id) ?? [], req.compact)) };
}

/** Stored events after a sequence, for the stream's replay. */
export async function getJobEvents(
  ctx: JobsContext,
  call: CallContext,
  req: agentJobsV1.GetJobEventsRequest,
): Promise<agentJobsV1.GetJobEventsResponse> {
  const row = await ownJob(ctx, requirePrincipal(call), req.jobId);
  const events = await eventsAfter(ctx.db, row.id, Math.max(0, req.afterSequence));
  const job = jobToProto(row, events, false);
  return { events: job.events, status: row.status, sessionId: row.session_id, responseMode: job.responseMode };
}

/** Jobs still open on the session (the revert guard). */
export async function countActiveJobs(
  ctx: JobsContext,
  call: CallContext,
  req: agentJobsV1.CountActiveJobsRequest,
): Promise<agentJobsV1.CountActiveJobsResponse> {
  return { count: await countActive(ctx.db, requirePrincipal(call).ownerId, req.sessionId) };
}

/**
 * Runs `fn` holding a transaction-level advisory lock on the job, so two decisions on one job
 * (two approve calls, approve and continue) never commit the same staged changes twice. The
 * lock's transaction only holds the lock; `fn` reads and writes through its own queries.
 */
async function withJobLock<T>(ctx: JobsContext, jobId: string, fn: () => Promise<T>): Promise<T> {
  return ctx.db.transaction(async (trx) => {
    await trx.raw("select pg_advisory_xact_lock(hashtext(?))", [`job:${jobId}`]);
    return fn();
  });
}

function terminalConflict(row: JobRow): ConflictError {
  return new ConflictError(`Job is already ${row.status}`, { code: "job_not_cancellable", status: row.status });
}

/**
 * POST /v1/jobs/{id}/cancel. pending and awaiting_approval stop here at once (staged changes are
 * dropped, applied ones stay); an in_progress job running on this instance is aborted and waited
 * for (`stopped_here`); one running elsewhere gets the cancel flag, which its heartbeat notices
 * (`accepted`). 409 naming the status for a terminal job (also when it finished meanwhile).
 */
export async function cancelJob(
  ctx: JobsContext,
  call: CallContext,
  req: agentJobsV1.CancelJobRequest,
): Promise<agentJobsV1.CancelJobResponse> {
  const principal = requirePrincipal(call);
  for (let attempt = 0; attempt < 3; attempt++) {
    const row = await ownJob(ctx, principal, req.jobId);
    if (TERMINAL_STATUSES.includes(row.status)) throw terminalConflict(row);
    if (row.status === "pending" || row.status === "awaiting_approval") {
      const done = await cancelWaiting(ctx, row);
      if (done) return { job: await view(ctx, done, false), stopState: "stopped_here" };
      continue; // a worker claimed it meanwhile
    }
    const local = ctx.running.get(row.id);
    const flagged = await transition(ctx, row.id, { status: ["in_progress"] }, { cancel_requested: true });
    if (!flagged) continue;
    if (!local) return { job: await view(ctx, flagged, false), stopState: "accepted" };
    local.controller.abort("cancelled");
    await Promise.race([local.done, new Promise((r) => setTimeout(r, CANCEL_WAIT_MS))]);
    const after = await ownJob(ctx, principal, row.id);
    if (after.status !== "cancelled" && TERMINAL_STATUSES.includes(after.status)) throw terminalConflict(after);
    return {
      job: await view(ctx, after, false),
      stopState: after.status === "cancelled" ? "stopped_here" : "accepted",
    };
  }
  throw new ConflictError("The job changed state while cancelling; retry", { code: "job_busy" });
}

/**
 * Cancels a pending or awaiting job. Applied changes stay and are billed and recorded (an
 * approval job's approved changes, a paused long edit's committed part); staged ones are dropped.
 */
async function cancelWaiting(ctx: JobsContext, row: JobRow): Promise<JobRow | null> {
  const staged = row.state.staged;
  const applied = staged?.applied ?? [];
  const cancelled = await finishCancelledKeepingCharge(ctx, row);
  if (!cancelled) return null;
  if (staged && applied.length > 0) {
    await releaseCharge(ctx, row, billedOperations(sectionsOf(staged), applied.length));
    await recordApprovalTurn(
      ctx,
      row,
      staged,
      `${staged.reply}\n\n(Cancelled: ${applied.length} change${applied.length === 1 ? "" : "s"} applied, the rest discarded.)`,
      { remember: false, memoryKey: "" },
    ).catch((err) => ctx.log.warn({ err, jobId: row.id }, "recording the cancelled turn failed"));
  } else if (row.state.paused && row.state.paused.opsCount > 0) {
    // A long edit paused at its continue prompt: what it committed stays, billed and recorded.
    const paused = row.state.paused;
    const changes = paused.documentChanges ? agentV1.DocumentChanges.fromJSON(paused.documentChanges) : undefined;
    await releaseCharge(ctx, row, billedOperations(paused.sections, paused.opsCount));
    await ctx.sessions
      .appendTurn(
        {
          sessionId: row.session_id,
          userMessage: row.metadata.message ?? "",
          aiMessage: `${paused.reply}\n\n(Cancelled at the continue prompt.)`,
          checkpointVersionId: paused.checkpointVersionId,
          durableDocumentId: changes?.documentId ?? "",
          versionId: changes?.versionId ?? "",
          title: "",
          // A cancelled instruction is not one to carry into later turns.
          remember: false,
          memoryKey: "",
        },
        { principal: row.principal, requestId: row.id },
      )
      .catch((err) => ctx.log.warn({ err, jobId: row.id }, "recording the cancelled turn failed"));
  } else {
    await releaseCharge(ctx, row);
  }
  return cancelled;
}

async function finishCancelledKeepingCharge(ctx: JobsContext, row: JobRow): Promise<JobRow | null> {
  return transition(
    ctx,
    row.id,
    { status: [row.status] },
    (current) => ({
      status: "cancelled",
      metadata: { ...current.metadata, pending_changes: undefined, awaiting_kind: undefined },
      state: {},
    }),
    [{ type: "error", data: { error: "Job cancelled" } }],
  );
}

type Staged = NonNullable<JobState["staged"]>;

/** The memory note a job's turn adds its message to, as a completed sync turn does. */
function jobMemory(row: JobRow): { remember: boolean; memoryKey: string } {
  return { remember: true, memoryKey: agentV1.ChatRequest.fromJSON(row.request).crossSessionMemoryKey };
}

async function recordApprovalTurn(
  ctx: JobsContext,
  row: JobRow,
  staged: Staged,
  reply: string,
  memory = jobMemory(row),
): Promise<number> {
  const last = staged.applied.length > 0 ? staged.headVersionId : "";
  const res = await ctx.sessions.appendTurn(
    {
      sessionId: row.session_id,
      userMessage: row.metadata.message ?? "",
      aiMessage: reply,
      checkpointVersionId: staged.checkpointVersionId,
      durableDocumentId: last ? staged.durableId : "",
      versionId: last,
      title: staged.title,
      ...memory,
    },
    { principal: row.principal, requestId: row.id },
  );
  return res.turnIndex;
}

/**
 * Inserts whose anchor is a denied insert move to that insert's own anchor, so an approved
 * paragraph after a denied heading still lands where it would have.
 */
function reanchor(ops: ChunkOperation[], denied: Map<string, ChunkOperation>): ChunkOperation[] {
  return ops.map((op) => {
    if (op.kind !== "insert") return op;
    let after = op.afterChunkId;
    for (let guard = 0; after && guard < 1000; guard++) {
      const d = denied.get(after);
      if (d?.kind !== "insert") break;
      after = d.afterChunkId;
    }
    return { ...op, afterChunkId: after };
  });
}

/** The caller's job in `sessionId`; NotFoundError for an unknown job, another owner's or another session's. */
async function sessionJob(ctx: JobsContext, call: CallContext, jobId: string, sessionId: string): Promise<JobRow> {
  const row = await ownJob(ctx, requirePrincipal(call), jobId);
  if (row.session_id !== sessionId) throw new NotFoundError("Job not found in this session");
  return row;
}

/** 409 when a job left the state a decision was made in (another request got there first). */
function jobBusy(): ConflictError {
  return new ConflictError("The job changed state; reload it", { code: "job_busy" });
}

/**
 * Completes a job that was awaiting approval with `result`, merging `metadata` into its
 * metadata, and emits final and usage; 409 job_busy when it is no longer awaiting.
 */
async function completeAwaiting(
  ctx: JobsContext,
  jobId: string,
  result: agentV1.ChatResponse,
  metadata: Partial<JobRow["metadata"]>,
): Promise<JobRow> {
  const done = await transition(
    ctx,
    jobId,
    { status: ["awaiting_approval"] },
    (current) => ({
      status: "completed",
      progress: 100,
      result: agentV1.ChatResponse.toJSON(result),
      metadata: { ...current.metadata, ...metadata },
      state: {},
    }),
    [
      { type: "final", data: finalEvent(result) },
      { type: "usage", data: usageEvent(result.usage) },
    ],
  );
  if (!done) throw jobBusy();
  return done;
}

/**
 * POST /v1/chat/{session_id}/approve: decides pending changes of a job awaiting approval. The
 * approved ones of this call commit atomically as one version; denied ones are dropped and their
 * feedback is kept for the agent (the turn's record and the next turn's history). When nothing
 * is left pending, the turn is billed and recorded and the job completes (final, usage).
 * 404 for an unknown job or one of another session; 409 when it is not awaiting changes; 400 for
 * an unknown change id.
 */
export async function decideChanges(
  ctx: JobsContext,
  call: CallContext,
  req: agentJobsV1.DecideChangesRequest,
): Promise<agentJobsV1.DecideChangesResponse> {
  return withJobLock(ctx, req.jobId, () => decideLocked(ctx, call, req));
}

async function decideLocked(
  ctx: JobsContext,
  call: CallContext,
  req: agentJobsV1.DecideChangesRequest,
): Promise<agentJobsV1.DecideChangesResponse> {
  const row = await sessionJob(ctx, call, req.jobId, req.sessionId);
  const staged = row.state.staged;
  const pending = row.metadata.pending_changes ?? [];
  if (row.status !== "awaiting_approval" || row.metadata.awaiting_kind !== "changes" || !staged) {
    throw new ConflictError(`Job is ${row.status}, not awaiting approval of changes`, {
      code: "not_awaiting_approval",
      status: row.status,
    });
  }
  if (req.decisions.length === 0) throw new InputError("no decision given");
  const decisions = new Map<string, agentJobsV1.ChangeDecision>();
  for (const d of req.decisions) {
    if (d.changeId === "") for (const c of pending) decisions.set(c.change_id, { ...d, changeId: c.change_id });
    else if (!pending.some((c) => c.change_id === d.changeId))
      throw new InputError(`Unknown or already decided change_id ${d.changeId}`);
    else decisions.set(d.changeId, d);
  }
  const approved = pending.filter((c) => decisions.get(c.change_id)?.approved === true);
  const denied = pending.filter((c) => decisions.get(c.change_id)?.approved === false);
  const remaining = pending.filter((c) => !decisions.has(c.change_id));
  const feedback = [...decisions.values()]
    .filter((d) => !d.approved && d.feedback.trim())
    .map((d) => d.feedback.trim());

  const opts = { principal: row.principal, requestId: row.id };
  let versionId = "";
  if (approved.length > 0) {
    const deniedOps = new Map(denied.map((c) => [c.chunk_id, staged.operations[c.change_id]]));
    const ops = reanchor(
      approved.map((c) => staged.operations[c.change_id]),
      deniedOps,
    );
    const committed = await ctx.documents.commitOperations(
      {
        documentId: staged.durableId,
        baseVersionId: staged.headVersionId,
        sessionId: row.session_id,
        operations: ops.map(chunkOpToProto),
        summary: summarizeOperations(ops),
        returnChunks: false,
        // The same decision applied twice (a retried request) commits once.
        idempotencyKey: `${row.id}:approve:${approved
          .map((c) => c.change_id)
          .sort()
          .join(",")}`,
      },
      opts,
    );
    versionId = (committed.document as documentsV1.DocumentMeta).versionId;
  }
  const newStaged: Staged = {
    ...staged,
    headVersionId: versionId || staged.headVersionId,
    applied: [...staged.applied, ...approved],
  };
  const allFeedback = [...(row.metadata.feedback ?? []), ...feedback];

  if (remaining.length > 0) {
    const updated = await transition(ctx, row.id, { status: ["awaiting_approval"] }, (current) => ({
      metadata: { ...current.metadata, pending_changes: remaining, feedback: allFeedback },
      state: { staged: newStaged },
    }));
    if (!updated) throw jobBusy();
    return {
      job: await view(ctx, updated, false),
      applied: approved.map((c) => c.change_id),
      denied: denied.map((c) => c.change_id),
      versionId,
    };
  }

  // Everything decided: bill what was applied, record the turn, complete the job.
  const appliedAll = newStaged.applied;
  const settled = await ctx.billing.settleOperations(
    { chargeKey: row.charge_key, operations: billedOperations(sectionsOf(newStaged), appliedAll.length) },
    opts,
  );
  const reply =
    allFeedback.length > 0 ? `${staged.reply}\n\n(Declined with feedback: ${allFeedback.join(" | ")})` : staged.reply;
  const turnIndex = await recordApprovalTurn(ctx, row, newStaged, reply);
  const html =
    row.metadata.response_mode === "compact" || appliedAll.length === 0
      ? undefined
      : (
          await ctx.documents.getDocument({ documentId: staged.durableId, versionId: "", includeChunks: true }, opts)
        ).chunks
          .map((c) => c.html)
          .join("\n");
  const records = appliedAll.map(toRecord);
  const result: agentV1.ChatResponse = {
    response: reply,
    sessionId: row.session_id,
    documentChanges: {
      updatedHtml: html,
      versionId: newStaged.headVersionId,
      changesSummary:
        appliedAll.length > 0
          ? `${appliedAll.length} change${appliedAll.length === 1 ? "" : "s"} approved`
          : "No changes",
      requiresApproval: true,
      changes: records,
      chunkDiffs: records,
      documentId: staged.durableId,
      concurrentMerges: [],
    },
    usage: settled.usage as billingV1.Usage,
    turnIndex,
    engine: ctx.engine.name,
  };
  const done = await completeAwaiting(ctx, row.id, result, {
    pending_changes: undefined,
    awaiting_kind: undefined,
    feedback: allFeedback,
  });
  return {
    job: await view(ctx, done, false),
    applied: approved.map((c) => c.change_id),
    denied: denied.map((c) => c.change_id),
    versionId,
  };
}

/** Distinct sections touched by the applied changes (billing: 1 more operation per 25). */
function sectionsOf(staged: Staged): number {
  return new Set(staged.applied.map((c) => staged.sectionOf[c.change_id] ?? c.chunk_id)).size;
}

function toRecord(c: StagedChange): documentsV1.ChangeRecord {
  return {
    changeId: c.change_id,
    operation: c.operation,
    chunkId: c.chunk_id,
    documentId: c.document_id,
    oldHtml: c.old_html,
    newHtml: c.new_html,
    aiExplanation: c.ai_explanation,
    insertAfterChunkId: c.insert_after_chunk_id,
  };
}

/**
 * POST /v1/chat/{session_id}/continue: answers a continue_prompt. `continue` puts the job back
 * to pending (a worker goes on from the committed edits); otherwise it completes with what was
 * done. 409 when the job is not at a continue_prompt.
 */
export async function continueJob(
  ctx: JobsContext,
  call: CallContext,
  req: agentJobsV1.ContinueJobRequest,
): Promise<agentJobsV1.ContinueJobResponse> {
  return withJobLock(ctx, req.jobId, () => continueLocked(ctx, call, req));
}

async function continueLocked(
  ctx: JobsContext,
  call: CallContext,
  req: agentJobsV1.ContinueJobRequest,
): Promise<agentJobsV1.ContinueJobResponse> {
  const row = await sessionJob(ctx, call, req.jobId, req.sessionId);
  const paused = row.state.paused;
  if (row.status !== "awaiting_approval" || row.metadata.awaiting_kind !== "continue_prompt" || !paused) {
    throw new ConflictError(`Job is ${row.status}, not waiting at a continue prompt`, {
      code: "not_awaiting_continue",
      status: row.status,
    });
  }
  if (req.continue) {
    const updated = await transition(ctx, row.id, { status: ["awaiting_approval"] }, (current) => ({
      status: "pending",
      metadata: { ...current.metadata, awaiting_kind: undefined },
    }));
    if (!updated) throw jobBusy();
    ctx.wake();
    return { job: await view(ctx, updated, false) };
  }
  const opts = { principal: row.principal, requestId: row.id };
  const settled = await ctx.billing.settleOperations(
    { chargeKey: row.charge_key, operations: billedOperations(paused.sections, paused.opsCount) },
    opts,
  );
  const documentChanges = paused.documentChanges ? agentV1.DocumentChanges.fromJSON(paused.documentChanges) : undefined;
  const turn = await ctx.sessions.appendTurn(
    {
      sessionId: row.session_id,
      userMessage: row.metadata.message ?? "",
      aiMessage: paused.reply,
      checkpointVersionId: paused.checkpointVersionId,
      durableDocumentId: documentChanges?.documentId ?? "",
      versionId: documentChanges?.versionId ?? "",
      title: "",
      ...jobMemory(row),
    },
    opts,
  );
  const result: agentV1.ChatResponse = {
    response: paused.reply,
    sessionId: row.session_id,
    documentChanges,
    usage: settled.usage as billingV1.Usage,
    turnIndex: turn.turnIndex,
    engine: ctx.engine.name,
  };
  const done = await completeAwaiting(ctx, row.id, result, { awaiting_kind: undefined });
  return { job: await view(ctx, done, false) };
}
