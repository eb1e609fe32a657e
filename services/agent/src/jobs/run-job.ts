// One claimed chat job, from prepare to completed, failed, cancelled or awaiting_approval. The
// phases are those of the sync turn (turn/: prepare → run → persist → ledger); what differs is
// where the output goes: events on the job, staged changes in approval mode, a wrap-up message
// at the cap (interface-spec Errors rule 4), a continue prompt at the engine's step limit.
import { agentV1 } from "@redline/grpc-stubs";
import { type Logger, RedlineError } from "@redline/service-kit";
import type { AgentContext, HandedContext } from "../context.js";
import { claimHandedJob, saveJobState } from "../db/store/jobs.js";
import type { CommittedTurn, JobRow, JobState } from "../db/tables.js";
import { billedOperations, finishTurn } from "../turn/ledger.js";
import { sectionsChanged } from "../turn/operations.js";
import { commitTurn, stageTurn } from "../turn/persist.js";
import { type PreparedTurn, prepareTurn, type TurnActor, turnCheckpoint } from "../turn/prepare.js";
import { aiTimeoutText, runTurn } from "../turn/run.js";
import { jobActor } from "./actor.js";
import { documentSyncEvent, intermediateEvent, proposedChangeEvents } from "./events.js";
import { emit, type Guard, markAwaiting, markCompleted } from "./lifecycle.js";

/** What the engine is told when a caller answers a continue_prompt with continue=true. */
const CONTINUE_MESSAGE = "Continue the edit where you stopped; do not redo what is already done.";

/**
 * Why a job's turn was aborted: a cancel, a lease another worker took over, or a graceful stop
 * of this agent (the job is handed back to the others).
 */
export class JobAborted extends Error {
  constructor(readonly reason: "cancelled" | "lease_lost" | "shutdown") {
    super(reason);
  }
}

function abortedBy(signal: AbortSignal): JobAborted {
  return new JobAborted(signal.reason === "lease_lost" || signal.reason === "shutdown" ? signal.reason : "cancelled");
}

/** A clear, user-facing error text for a job that failed. */
export function failureText(err: unknown): string {
  if (err instanceof RedlineError) return typeof err.detail === "string" ? err.detail : err.message;
  return "The job failed because of an internal error";
}

/** One worker's job: the row as claimed, its lease owner, the actor and the guard of its writes. */
interface JobRun {
  row: JobRow;
  worker: string;
  actor: TurnActor;
  guard: Guard;
}

/**
 * Runs the job's turn under the wall-clock cap and `signal` (cancel, a lost lease, or a graceful
 * stop, which interrupts only the engine phase). Ends in
 * exactly one guarded transition, so a job cancelled or reclaimed meanwhile is left alone. A
 * handed job (`handed`: leased to `worker` but still pending) is claimed while its turn starts;
 * nothing of the turn is written before that claim succeeds.
 */
export async function runJob(
  ctx: AgentContext,
  row: JobRow,
  worker: string,
  signal: AbortSignal,
  handed?: HandedContext,
): Promise<void> {
  const job: JobRun = {
    row,
    worker,
    actor: jobActor(ctx, row),
    guard: { status: ["in_progress"], leaseOwner: worker },
  };
  const paused = row.state.paused;
  const original = agentV1.ChatRequest.fromJSON(row.request);
  // A continued long edit works on what is committed now: nothing is loaded again.
  const req = paused
    ? { ...original, documentHtml: undefined, upload: undefined, message: CONTINUE_MESSAGE }
    : original;
  const claimed = handed ? claimHandedJob(ctx.db, row.id, worker, ctx.jobsCfg.leaseMs) : Promise.resolve(row);
  const progress = progressEvents(ctx, row.id, claimed, job.actor.log);
  const prepared = await prepareTurn(ctx, job.actor, req, {
    newSession: row.state.newSession === true && !paused,
    context: handed,
  });
  // An earlier run committed this turn and then lost its worker: finish, do not redo.
  if (row.state.committed) return finishCommitted(ctx, job, prepared, row.state.committed);
  if (prepared.target?.load) progress.documentSync(prepared.base.toHtml());
  progress.step("Reading the document");
  const history = [...(paused ? [user(original.message), ai(paused.reply)] : []), ...feedbackHistory(row)];
  const engine = await runTurn(ctx, prepared, { signal, onProgress: progress.step, extraHistory: history }).catch(
    (err) => {
      throw signal.aborted ? abortedBy(signal) : err;
    },
  );
  const reply = engine.output?.reply ?? wrapUp(ctx, prepared);
  await progress.flush();
  // Once the engine is done a graceful stop no longer interrupts: storing and billing take far
  // less than the shutdown deadline, and handing back would have another agent redo the model's work.
  if (signal.aborted && signal.reason !== "shutdown") throw abortedBy(signal);
  // Cancelled (or taken over) before it was claimed: nothing of the turn may be written.
  if (!(await claimed)) throw new JobAborted("lease_lost");
  if (req.approvalMode === "ask_every_time" && prepared.working.operations().length > 0)
    return stageForApproval(ctx, job, prepared, reply, engine.timedOut);
  if (engine.output?.stoppedAtStepLimit) return pauseForContinue(ctx, job, prepared, reply);
  await completeTurn(ctx, job, prepared, reply);
}

const user = (content: string) => ({ sender: "user" as const, content });
const ai = (content: string) => ({ sender: "ai" as const, content });

/** Feedback on changes denied earlier in this job, said to the model after the history. */
function feedbackHistory(row: JobRow): { sender: "user" | "ai"; content: string }[] {
  const feedback = row.metadata.feedback ?? [];
  return feedback.length > 0 ? [user(`Feedback on changes I declined: ${feedback.join(" | ")}`)] : [];
}

/** Errors rule 4: past the cap an async job completes with this reply; the edits so far are kept. */
function wrapUp(ctx: AgentContext, prepared: PreparedTurn): string {
  const edits = prepared.working.operations().length;
  const kept =
    edits > 0 ? `; the ${edits} change${edits === 1 ? "" : "s"} made so far ${edits === 1 ? "is" : "are"} kept` : "";
  return `${aiTimeoutText(ctx)}, so I stopped here${kept}. Send a follow-up message to continue.`;
}

/**
 * The job's progress events, appended in order one at a time without holding up the engine,
 * and only once the job is claimed. `documentSync` goes first when called before any step.
 */
function progressEvents(ctx: AgentContext, jobId: string, claimed: Promise<unknown>, log: Logger) {
  let progress = 10;
  let chain: Promise<void> = claimed.then(
    () => {},
    () => {},
  );
  const append = (what: string, events: Parameters<typeof emit>[2], p: number) => {
    chain = chain.then(() => emit(ctx, jobId, events, p)).catch((err) => log.warn({ err }, `recording ${what} failed`));
  };
  return {
    documentSync: (content: string) => append("document_sync", [documentSyncEvent(content)], 10),
    step: (content: string) => {
      progress = Math.min(90, progress + 5);
      append("a progress event", [intermediateEvent(content)], progress);
    },
    flush: () => chain,
  };
}

/** approve_all: commit, then bill, record and complete (finishCommitted). */
async function completeTurn(ctx: AgentContext, job: JobRun, prepared: PreparedTurn, reply: string): Promise<void> {
  const { row } = job;
  const ops = prepared.working.operations();
  const paused = row.state.paused;
  // The roster attach of a loaded document rides on the turn's record (finishCommitted).
  const committed = await commitTurn(ctx, job.actor, prepared, true);
  const documentChanges =
    committed.documentChanges ??
    (paused?.documentChanges ? agentV1.DocumentChanges.fromJSON(paused.documentChanges) : undefined);
  const sections =
    (ops.length > 0 ? sectionsChanged(prepared.base, prepared.working, ops) : 0) + (paused?.sections ?? 0);
  const turn: CommittedTurn = {
    reply,
    documentChanges: documentChanges ? agentV1.DocumentChanges.toJSON(documentChanges) : undefined,
    operations: billedOperations(sections, ops.length + (paused?.opsCount ?? 0)),
    title: committed.stored?.title ?? prepared.target?.title ?? "",
    checkpointVersionId: paused?.checkpointVersionId ?? turnCheckpoint(prepared),
    attach: committed.attach,
  };
  // From here on a rerun (this worker killed) must not run the engine and commit again. A turn
  // that committed no edits needs no such mark: a rerun stores the same load again (idempotent
  // per job) and its reply describes what it did.
  if (ops.length > 0 || paused) await saveState(ctx, job, { committed: turn });
  else row.state = { ...row.state, committed: turn };
  await finishCommitted(ctx, job, prepared, turn);
}

/**
 * Bills, records and completes a turn whose edits are committed. A rerun after a crash resumes
 * here: a turn already recorded is not recorded again (`result` marks it).
 */
async function finishCommitted(
  ctx: AgentContext,
  job: JobRun,
  prepared: PreparedTurn,
  turn: CommittedTurn,
): Promise<void> {
  const { row } = job;
  let result = turn.result ? agentV1.ChatResponse.fromJSON(turn.result) : undefined;
  if (!result) {
    const documentChanges = turn.documentChanges ? agentV1.DocumentChanges.fromJSON(turn.documentChanges) : undefined;
    const request = agentV1.ChatRequest.fromJSON(row.request);
    const { usage, turnIndex } = await finishTurn(ctx, job.actor.opts, {
      chargeKey: row.charge_key,
      operations: turn.operations,
      sessionId: prepared.sessionId,
      userMessage: request.message,
      reply: turn.reply,
      checkpointVersionId: turn.checkpointVersionId,
      documentId: documentChanges?.documentId ?? "",
      versionId: documentChanges?.versionId ?? "",
      title: turn.title,
      attach: turn.attach,
      remember: true,
      memoryKey: request.crossSessionMemoryKey,
      memoryNoteSeen: prepared.memoryNote,
    });
    const engine = ctx.engine.name;
    result = { response: turn.reply, sessionId: prepared.sessionId, documentChanges, usage, turnIndex, engine };
  }
  // One statement marks the turn recorded and completes the job: a crash before it re-records
  // the turn exactly as a separate save would have allowed, and it saves a round trip per job.
  row.state = { ...row.state, committed: { ...turn, result: agentV1.ChatResponse.toJSON(result) } };
  await markCompleted(ctx, row.id, job.guard, result, row.state);
}

/** Merges `patch` into the job's worker state while this worker holds the lease. */
async function saveState(ctx: AgentContext, job: JobRun, patch: Partial<JobState>): Promise<void> {
  job.row.state = { ...job.row.state, ...patch };
  if (!(await saveJobState(ctx.db, job.row.id, job.worker, job.row.state))) throw new JobAborted("lease_lost");
}

/** ask_every_time: store the loaded content, stage the operations as pending changes, wait. */
async function stageForApproval(
  ctx: AgentContext,
  job: JobRun,
  prepared: PreparedTurn,
  reply: string,
  timedOut: boolean,
): Promise<void> {
  const { records, staged } = await stageTurn(ctx, job.actor, prepared, reply, timedOut);
  const metadata = { pending_changes: records, awaiting_kind: "changes" as const };
  await markAwaiting(
    ctx,
    job.row.id,
    job.worker,
    { progress: 90, metadata, state: { staged } },
    proposedChangeEvents(records),
  );
}

/**
 * A long edit stopped at the engine's step limit: the edits so far are committed (applied
 * changes stay), and the job waits at a continue_prompt. Continue runs another turn from there.
 */
async function pauseForContinue(ctx: AgentContext, job: JobRun, prepared: PreparedTurn, reply: string): Promise<void> {
  const ops = prepared.working.operations();
  const before = job.row.state.paused;
  const { documentChanges } = await commitTurn(ctx, job.actor, prepared, false);
  const paused: NonNullable<JobState["paused"]> = {
    reply,
    sections: sectionsChanged(prepared.base, prepared.working, ops) + (before?.sections ?? 0),
    opsCount: ops.length + (before?.opsCount ?? 0),
    documentChanges: documentChanges ? agentV1.DocumentChanges.toJSON(documentChanges) : before?.documentChanges,
    checkpointVersionId: before?.checkpointVersionId ?? turnCheckpoint(prepared),
  };
  const metadata = { awaiting_kind: "continue_prompt" as const };
  await markAwaiting(ctx, job.row.id, job.worker, { progress: 50, metadata, state: { paused } }, [
    intermediateEvent(reply, "continue_prompt"),
  ]);
}
