// Decisions on a job that waits (ARCHITECTURE "Async chat jobs", Approval and Continue prompt):
// approving or denying staged changes, and answering a continue prompt. Decisions on one job
// are serialized by an advisory lock, so staged changes never commit twice.
import { type agentV1, documentsV1 } from "@redline/grpc-stubs";
import type { ChunkOperation } from "@redline/html-chunks";
import {
  ConflictError,
  InputError,
  NotFoundError,
  type Principal,
  required,
  type TraceContext,
} from "@redline/service-kit";
import type { AgentContext } from "../context.js";
import { lockKey } from "../db/store/jobs.js";
import type { JobRow, JobState, StagedChange } from "../db/tables.js";
import { jobOpts } from "../jobs/actor.js";
import { markCompleted, markRequeued, updateAwaiting } from "../jobs/lifecycle.js";
import { jobMemory, recordApprovalTurn, recordPausedTurn } from "../jobs/records.js";
import { stagedToRecord } from "../mappers.js";
import { approvalCommitKey, jobLockKey } from "../turn/keys.js";
import { chunkOpToProto, summarizeOperations } from "../turn/operations.js";
import { headHtml } from "../turn/persist.js";
import { ownJob } from "./jobs.js";

type Staged = NonNullable<JobState["staged"]>;

/** A decision on staged changes: `changeId` "" decides every pending change. */
export interface Decision {
  changeId: string;
  approved: boolean;
  feedback: string;
}

/** What a decision did: the job after it, the change ids applied and denied, the new version. */
export interface DecisionResult {
  row: JobRow;
  applied: string[];
  denied: string[];
  versionId: string;
}

/**
 * Runs `fn` holding a transaction-level advisory lock on the job, so two decisions on one job
 * (two approve calls, approve and continue) never commit the same staged changes twice. The
 * lock's transaction only holds the lock; `fn` reads and writes through its own queries.
 */
async function withJobLock<T>(ctx: AgentContext, jobId: string, fn: () => Promise<T>): Promise<T> {
  return ctx.db.transaction(async (trx) => {
    await lockKey(trx, jobLockKey(jobId));
    return fn();
  });
}

/** The caller's job in `sessionId`; NotFoundError for an unknown job, another owner's or another session's. */
async function sessionJob(ctx: AgentContext, principal: Principal, jobId: string, sessionId: string): Promise<JobRow> {
  const row = await ownJob(ctx, principal, jobId);
  if (row.session_id !== sessionId) throw new NotFoundError("Job not found in this session");
  return row;
}

/** 409 when a job left the state a decision was made in (another request got there first). */
function jobBusy(): ConflictError {
  return new ConflictError("The job changed state; reload it", { code: "job_busy" });
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

/**
 * POST /v1/chat/{session_id}/approve: decides pending changes of a job awaiting approval. The
 * approved ones of this call commit atomically as one version; denied ones are dropped and their
 * feedback is kept for the agent (the turn's record and the next turn's history). When nothing
 * is left pending, the turn is billed and recorded and the job completes (final, usage).
 * 404 for an unknown job or one of another session; 409 when it is not awaiting changes; 400 for
 * no decision or an unknown change id.
 */
export async function decideChanges(
  ctx: AgentContext,
  principal: Principal,
  req: { jobId: string; sessionId: string; decisions: Decision[] },
  trace?: TraceContext,
): Promise<DecisionResult> {
  return withJobLock(ctx, req.jobId, () => decideLocked(ctx, principal, req, trace));
}

/** The job's pending changes split by the decisions: approved, denied, remaining, and the feedback given. */
function splitDecisions(pending: StagedChange[], given: Decision[]) {
  if (given.length === 0) throw new InputError("no decision given");
  const decisions = new Map<string, Decision>();
  for (const d of given) {
    if (d.changeId === "") for (const c of pending) decisions.set(c.change_id, { ...d, changeId: c.change_id });
    else if (!pending.some((c) => c.change_id === d.changeId))
      throw new InputError(`Unknown or already decided change_id ${d.changeId}`);
    else decisions.set(d.changeId, d);
  }
  return {
    approved: pending.filter((c) => decisions.get(c.change_id)?.approved === true),
    denied: pending.filter((c) => decisions.get(c.change_id)?.approved === false),
    remaining: pending.filter((c) => !decisions.has(c.change_id)),
    feedback: [...decisions.values()].filter((d) => !d.approved && d.feedback.trim()).map((d) => d.feedback.trim()),
  };
}

/** Commits the approved changes as one version (keyed: a retried decision commits once); "" when none. */
async function commitApproved(
  ctx: AgentContext,
  row: JobRow,
  staged: Staged,
  approved: StagedChange[],
  denied: StagedChange[],
  trace: TraceContext | undefined,
): Promise<string> {
  if (approved.length === 0) return "";
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
      // The user approved them, but the text is the AI's.
      authorKind: documentsV1.AuthorKind.AUTHOR_KIND_AI,
      idempotencyKey: approvalCommitKey(
        row.id,
        approved.map((c) => c.change_id),
      ),
    },
    // The job's principal and request id, in the trace of the decision that approved them.
    { ...jobOpts(ctx, row), trace },
  );
  return required(committed.document, "document").versionId;
}

async function decideLocked(
  ctx: AgentContext,
  principal: Principal,
  req: { jobId: string; sessionId: string; decisions: Decision[] },
  trace: TraceContext | undefined,
): Promise<DecisionResult> {
  const row = await sessionJob(ctx, principal, req.jobId, req.sessionId);
  const staged = row.state.staged;
  if (row.status !== "awaiting_approval" || row.metadata.awaiting_kind !== "changes" || !staged) {
    throw new ConflictError(`Job is ${row.status}, not awaiting approval of changes`, {
      code: "not_awaiting_approval",
      status: row.status,
    });
  }
  const { approved, denied, remaining, feedback } = splitDecisions(row.metadata.pending_changes ?? [], req.decisions);
  const versionId = await commitApproved(ctx, row, staged, approved, denied, trace);
  const newStaged: Staged = {
    ...staged,
    headVersionId: versionId || staged.headVersionId,
    applied: [...staged.applied, ...approved],
  };
  const allFeedback = [...(row.metadata.feedback ?? []), ...feedback];
  const done =
    remaining.length > 0
      ? await updateAwaiting(ctx, row.id, { pending_changes: remaining, feedback: allFeedback }, { staged: newStaged })
      : await completeApproval(ctx, row, newStaged, allFeedback);
  if (!done) throw jobBusy();
  const ids = (changes: StagedChange[]) => changes.map((c) => c.change_id);
  return { row: done, applied: ids(approved), denied: ids(denied), versionId };
}

const changes = (n: number) => `${n} change${n === 1 ? "" : "s"}`;

/**
 * The AI's reply once every change is decided. The engine wrote its reply as if every proposed
 * change were made, so when some were declined it must not read as done: it says how many were
 * proposed and not applied, with the user's feedback, and keeps the engine's text as the proposal.
 */
export function approvalReply(staged: Staged, feedback: string[]): string {
  const proposed = Object.keys(staged.operations).length;
  const declined = Math.max(0, proposed - staged.applied.length);
  const why = feedback.length > 0 ? ` Your feedback: ${feedback.join(" | ")}` : "";
  if (declined === 0) return why ? `${staged.reply}\n\n(${why.trim()})` : staged.reply;
  if (staged.applied.length === 0) {
    const summary = `I proposed ${changes(proposed)} and none was applied: you declined ${proposed === 1 ? "it" : "them"}, so the document is unchanged.`;
    return `${summary}${why}\n\nWhat I had proposed: ${staged.reply}`;
  }
  const summary = `${staged.applied.length} of the ${changes(proposed)} I proposed ${staged.applied.length === 1 ? "was" : "were"} applied; ${declined} ${declined === 1 ? "was" : "were"} declined and not made.`;
  return `${summary}${why}\n\nWhat I had proposed: ${staged.reply}`;
}

/** Everything decided: bill what was applied, record the turn, complete the job (final, usage). */
async function completeApproval(
  ctx: AgentContext,
  row: JobRow,
  staged: Staged,
  feedback: string[],
): Promise<JobRow | null> {
  const applied = staged.applied;
  const reply = approvalReply(staged, feedback);
  const { usage, turnIndex } = await recordApprovalTurn(ctx, row, staged, reply, jobMemory(row));
  const compact = row.metadata.response_mode === "compact" || applied.length === 0;
  const html = compact ? undefined : await headHtml(ctx, { opts: jobOpts(ctx, row) }, staged.durableId);
  const records = applied.map(stagedToRecord);
  const n = applied.length;
  const result: agentV1.ChatResponse = {
    response: reply,
    sessionId: row.session_id,
    documentChanges: {
      updatedHtml: html,
      versionId: staged.headVersionId,
      changesSummary: n > 0 ? `${n} change${n === 1 ? "" : "s"} approved` : "No changes",
      requiresApproval: true,
      changes: records,
      chunkDiffs: records,
      documentId: staged.durableId,
      concurrentMerges: [],
    },
    usage,
    turnIndex,
    engine: ctx.engine.name,
  };
  const metadata = { pending_changes: undefined, awaiting_kind: undefined, feedback };
  return markCompleted(ctx, row.id, { status: ["awaiting_approval"] }, result, {}, metadata);
}

/**
 * POST /v1/chat/{session_id}/continue: answers a continue_prompt. `continue` puts the job back
 * to pending (a worker goes on from the committed edits); otherwise it completes with what was
 * done, billed and recorded. 404 as for decisions; 409 when the job is not at a continue_prompt.
 */
export async function continueJob(
  ctx: AgentContext,
  principal: Principal,
  req: { jobId: string; sessionId: string; continue: boolean },
): Promise<JobRow> {
  return withJobLock(ctx, req.jobId, () => continueLocked(ctx, principal, req));
}

async function continueLocked(
  ctx: AgentContext,
  principal: Principal,
  req: { jobId: string; sessionId: string; continue: boolean },
): Promise<JobRow> {
  const row = await sessionJob(ctx, principal, req.jobId, req.sessionId);
  const paused = row.state.paused;
  if (row.status !== "awaiting_approval" || row.metadata.awaiting_kind !== "continue_prompt" || !paused) {
    throw new ConflictError(`Job is ${row.status}, not waiting at a continue prompt`, {
      code: "not_awaiting_continue",
      status: row.status,
    });
  }
  if (req.continue) {
    const updated = await markRequeued(ctx, row.id);
    if (!updated) throw jobBusy();
    ctx.wake();
    return updated;
  }
  const { usage, turnIndex, documentChanges } = await recordPausedTurn(ctx, row, paused, paused.reply, jobMemory(row));
  const engine = ctx.engine.name;
  const result = { response: paused.reply, sessionId: row.session_id, documentChanges, usage, turnIndex, engine };
  const done = await markCompleted(
    ctx,
    row.id,
    { status: ["awaiting_approval"] },
    result,
    {},
    { awaiting_kind: undefined },
  );
  if (!done) throw jobBusy();
  return done;
}
