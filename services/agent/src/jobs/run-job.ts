// One claimed chat job, from prepare to completed, failed, cancelled or awaiting_approval. The
// phases are those of the sync turn (commands/chat-turn.ts); what differs is where the output
// goes: events on the job, staged changes in approval mode, a wrap-up message at the cap.
import { randomBytes, randomUUID } from "node:crypto";
import { agentV1, type billingV1 } from "@redline/grpc-stubs";
import type { ChunkOperation, WorkingDocument } from "@redline/html-chunks";
import { RedlineError } from "@redline/service-kit";
import {
  aiTimeoutText,
  billedOperations,
  commitTurn,
  type PreparedTurn,
  prepareTurn,
  recordTurn,
  runTurnEngine,
  sectionsChanged,
  storeLoad,
  type TurnActor,
  turnCheckpoint,
} from "../commands/chat-turn.js";
import type { CommittedTurn, JobRow, JobState, StagedChange } from "../tables.js";
import type { HandedContext, JobsContext } from "./runtime.js";
import { claimHandedJob, T } from "./store.js";
import { emit, type Guard, transition } from "./transition.js";

/** What the engine is told when a caller answers a continue_prompt with continue=true. */
const CONTINUE_MESSAGE = "Continue the edit where you stopped; do not redo what is already done.";

const OPERATION_NAME = { replace: "edit", insert: "create", delete: "delete" } as const;

/** Why a job's turn was aborted. */
export class JobAborted extends Error {
  constructor(readonly reason: "cancelled" | "lease_lost") {
    super(reason);
  }
}

/** The actor a job acts as: its creator's principal, the job id as request id. */
export function jobActor(ctx: JobsContext, row: JobRow): TurnActor {
  return {
    principal: row.principal,
    opts: { principal: row.principal, requestId: row.id },
    log: ctx.log.child({ jobId: row.id }),
    // One key per committing turn of the job: each continue cycle that commits raises opsCount.
    commitKey: `${row.id}:${row.state.paused?.opsCount ?? 0}`,
  };
}

/**
 * The final event's data: the result in proto JSON, so a stream sends `{result}` without reading
 * the job again (the gateway maps it to the spec's JSON).
 */
export function finalEvent(result: agentV1.ChatResponse): Record<string, unknown> {
  return { result: agentV1.ChatResponse.toJSON(result) };
}

/** The usage event's data (unshown-parts.md: monthly_used, monthly_limit, monthly_remaining). */
export function usageEvent(usage: billingV1.Usage | undefined): Record<string, unknown> {
  return {
    monthly_used: usage?.monthlyUsed ?? 0,
    monthly_limit: usage?.monthlyLimit ?? 0,
    monthly_remaining: usage?.monthlyRemaining ?? 0,
  };
}

/** Change records of a turn's net operations, read from the base and the working copy. */
export function stageRecords(
  ops: ChunkOperation[],
  base: WorkingDocument,
  working: WorkingDocument,
  documentId: string,
): StagedChange[] {
  const batchId = `batch_${randomBytes(6).toString("hex")}`;
  return ops.map((op) => ({
    change_id: randomUUID(),
    operation: OPERATION_NAME[op.kind],
    chunk_id: op.chunkId,
    document_id: documentId,
    old_html: op.kind === "insert" || !base.has(op.chunkId) ? "" : base.get(op.chunkId).html,
    new_html: op.kind === "delete" ? "" : working.has(op.chunkId) ? working.get(op.chunkId).html : op.html,
    ai_explanation: op.explanation,
    insert_after_chunk_id: op.kind === "insert" ? (op.afterChunkId ?? "") : "",
    batch_id: batchId,
    batch_total: ops.length,
  }));
}

/**
 * Runs the job's turn under the wall-clock cap and `signal` (cancel or a lost lease). Ends in
 * exactly one guarded transition, so a job cancelled or reclaimed meanwhile is left alone.
 */
export async function runJob(
  ctx: JobsContext,
  row: JobRow,
  worker: string,
  signal: AbortSignal,
  handed?: HandedContext,
): Promise<void> {
  const actor = jobActor(ctx, row);
  const original = agentV1.ChatRequest.fromJSON(row.request);
  const paused = row.state.paused;
  // A continued long edit works on what is committed now: nothing is loaded again.
  const req = paused
    ? { ...original, documentHtml: undefined, upload: undefined, message: CONTINUE_MESSAGE }
    : original;
  const guard: Guard = { status: ["in_progress"], leaseOwner: worker };
  let progress = 10;
  // A job handed over at creation is claimed while its turn starts; events and writes wait for it.
  const claimed = handed ? claimHandedJob(ctx.db, row.id, worker, ctx.jobsCfg.leaseMs) : Promise.resolve(row);
  // Progress events are appended in order, one at a time, without holding up the engine.
  let chain: Promise<void> = claimed.then(
    () => {},
    () => {},
  );
  const progressEvent = (content: string) => {
    progress = Math.min(90, progress + 5);
    const p = progress;
    chain = chain
      .then(() =>
        emit(
          ctx,
          row.id,
          [{ type: "intermediate", data: { type: "intermediate", content, timestamp: new Date().toISOString() } }],
          p,
        ),
      )
      .catch((err) => actor.log.warn({ err }, "recording a progress event failed"));
  };

  const prepared = await prepareTurn(ctx, actor, req, {
    newSession: row.state.newSession === true && !paused,
    context: handed,
  });
  if (row.state.committed) {
    // An earlier run committed this turn and then lost its worker: finish, do not redo.
    await finishCommitted(ctx, row, guard, actor, prepared, row.state.committed);
    return;
  }
  if (prepared.target?.load) {
    // First on the chain, so it still precedes every progress event, without holding up the engine.
    const content = prepared.base.toHtml();
    chain = chain
      .then(() => emit(ctx, row.id, [{ type: "document_sync", data: { content } }], 10))
      .catch((err) => actor.log.warn({ err }, "recording document_sync failed"));
  }
  progressEvent("Reading the document");

  const cap = AbortSignal.timeout(ctx.cfg.aiTimeoutMs);
  const both = AbortSignal.any([cap, signal]);
  let reply: string;
  let timedOut = false;
  let stoppedAtStepLimit = false;
  try {
    const out = await runTurnEngine(ctx, prepared, {
      signal: both,
      onProgress: progressEvent,
      extraHistory: [
        ...(paused
          ? [
              { sender: "user" as const, content: original.message },
              { sender: "ai" as const, content: paused.reply },
            ]
          : []),
        ...feedbackHistory(row),
      ],
    });
    reply = out.reply;
    stoppedAtStepLimit = out.stoppedAtStepLimit ?? false;
  } catch (err) {
    if (signal.aborted) throw new JobAborted(signal.reason === "lease_lost" ? "lease_lost" : "cancelled");
    if (!cap.aborted) throw err;
    // Errors rule 4: past the cap an async job completes; the edits made so far are kept.
    timedOut = true;
    const edits = prepared.working.operations().length;
    reply = `${aiTimeoutText(ctx)}, so I stopped here${edits > 0 ? `; the ${edits} change${edits === 1 ? "" : "s"} made so far ${edits === 1 ? "is" : "are"} kept` : ""}. Send a follow-up message to continue.`;
  }
  await chain;
  if (signal.aborted) throw new JobAborted(signal.reason === "lease_lost" ? "lease_lost" : "cancelled");
  // Cancelled (or taken over) before it was claimed: nothing of the turn may be written.
  if (!(await claimed)) throw new JobAborted("lease_lost");

  const ops = prepared.working.operations();
  if (req.approvalMode === "ask_every_time" && ops.length > 0) {
    await stageChanges(ctx, row, worker, actor, prepared, reply, timedOut);
    return;
  }
  if (stoppedAtStepLimit && !timedOut) {
    await pauseForContinue(ctx, row, worker, actor, prepared, reply);
    return;
  }
  await completeTurn(ctx, row, guard, actor, prepared, reply);
}

/** Feedback on changes denied earlier in this job, said to the model after the history. */
function feedbackHistory(row: JobRow): { sender: "user" | "ai"; content: string }[] {
  const feedback = row.metadata.feedback ?? [];
  return feedback.length > 0
    ? [{ sender: "user", content: `Feedback on changes I declined: ${feedback.join(" | ")}` }]
    : [];
}

/** approve_all: commit, bill, record, complete with the result, then final and usage. */
async function completeTurn(
  ctx: JobsContext,
  row: JobRow,
  guard: Guard,
  actor: TurnActor,
  prepared: PreparedTurn,
  reply: string,
): Promise<void> {
  const ops = prepared.working.operations();
  const paused = row.state.paused;
  // The roster attach of a loaded document rides on the turn's record (finishCommitted).
  const committed = await commitTurn(ctx, actor, prepared, true);
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
  if (ops.length > 0 || paused) await saveState(ctx, row, guard, { committed: turn });
  else row.state = { ...row.state, committed: turn };
  await finishCommitted(ctx, row, guard, actor, prepared, turn);
}

/**
 * Bills, records and completes a turn whose edits are committed. A rerun after a crash resumes
 * here: a turn already recorded is not recorded again (`result` marks it).
 */
async function finishCommitted(
  ctx: JobsContext,
  row: JobRow,
  guard: Guard,
  actor: TurnActor,
  prepared: PreparedTurn,
  turn: CommittedTurn,
): Promise<void> {
  let result = turn.result ? agentV1.ChatResponse.fromJSON(turn.result) : undefined;
  if (!result) {
    const documentChanges = turn.documentChanges ? agentV1.DocumentChanges.fromJSON(turn.documentChanges) : undefined;
    const { usage, turnIndex } = await recordTurn(ctx, actor, prepared, {
      chargeKey: row.charge_key,
      operations: turn.operations,
      reply: turn.reply,
      documentChanges,
      title: turn.title,
      userMessage: agentV1.ChatRequest.fromJSON(row.request).message,
      checkpointVersionId: turn.checkpointVersionId,
      attach: turn.attach,
    });
    result = {
      response: turn.reply,
      sessionId: prepared.sessionId,
      documentChanges,
      usage,
      turnIndex,
      engine: ctx.engine.name,
    };
  }
  const resultJson = agentV1.ChatResponse.toJSON(result);
  // One transaction marks the turn recorded and completes the job: a crash before it re-records
  // the turn exactly as a separate save would have allowed, and it saves a round trip per job.
  row.state = { ...row.state, committed: { ...turn, result: resultJson } };
  await transition(ctx, row.id, guard, { status: "completed", progress: 100, result: resultJson, state: row.state }, [
    { type: "final", data: finalEvent(result) },
    { type: "usage", data: usageEvent(result.usage) },
  ]);
}

/** Merges `patch` into the job's worker state while this worker holds the lease. */
async function saveState(ctx: JobsContext, row: JobRow, guard: Guard, patch: Partial<JobState>): Promise<void> {
  row.state = { ...row.state, ...patch };
  const updated = await ctx
    .db(T.jobs)
    .where({ id: row.id, status: "in_progress", lease_owner: guard.leaseOwner ?? null })
    .update({ state: JSON.stringify(row.state) });
  if (updated === 0) throw new JobAborted("lease_lost");
}

/** ask_every_time: store the loaded content, stage the operations as pending changes, pause. */
async function stageChanges(
  ctx: JobsContext,
  row: JobRow,
  worker: string,
  actor: TurnActor,
  prepared: PreparedTurn,
  reply: string,
  timedOut: boolean,
): Promise<void> {
  const ops = prepared.working.operations();
  const { stored } = await storeLoad(ctx, actor, prepared, true);
  if (!stored) throw new Error("staging needs a stored document");
  const records = stageRecords(ops, prepared.base, prepared.working, stored.durableId);
  const operations: Record<string, ChunkOperation> = {};
  records.forEach((r, i) => {
    operations[r.change_id] = ops[i];
  });
  await transition(
    ctx,
    row.id,
    { status: ["in_progress"], leaseOwner: worker },
    (current) => ({
      status: "awaiting_approval",
      progress: 90,
      lease_owner: null,
      lease_expires_at: null,
      metadata: { ...current.metadata, pending_changes: records, awaiting_kind: "changes" },
      state: {
        staged: {
          durableId: stored.durableId,
          headVersionId: stored.versionId,
          checkpointVersionId: turnCheckpoint(prepared),
          title: stored.title,
          slotId: prepared.target?.slot?.documentId ?? "",
          reply,
          operations,
          applied: [],
          sectionOf: sectionKeys(records, prepared.base, prepared.working),
          timedOut,
        },
      },
    }),
    [
      ...records.map((r) => ({ type: "proposed_change", data: { ...r } })),
      { type: "proposed_change_batch", data: { batch_id: records[0]?.batch_id ?? "", changes: records } },
    ],
  );
}

/**
 * A long edit stopped at the engine's step limit: the edits so far are committed (applied
 * changes stay), and the job waits at a continue_prompt. Continue runs another turn from there.
 */
async function pauseForContinue(
  ctx: JobsContext,
  row: JobRow,
  worker: string,
  actor: TurnActor,
  prepared: PreparedTurn,
  reply: string,
): Promise<void> {
  const ops = prepared.working.operations();
  const { documentChanges } = await commitTurn(ctx, actor, prepared);
  await transition(
    ctx,
    row.id,
    { status: ["in_progress"], leaseOwner: worker },
    (current) => ({
      status: "awaiting_approval",
      progress: 50,
      lease_owner: null,
      lease_expires_at: null,
      metadata: { ...current.metadata, awaiting_kind: "continue_prompt" },
      state: {
        paused: {
          reply,
          sections: sectionsChanged(prepared.base, prepared.working, ops) + (current.state.paused?.sections ?? 0),
          opsCount: ops.length + (current.state.paused?.opsCount ?? 0),
          documentChanges: documentChanges
            ? agentV1.DocumentChanges.toJSON(documentChanges)
            : current.state.paused?.documentChanges,
          checkpointVersionId: current.state.paused?.checkpointVersionId ?? turnCheckpoint(prepared),
        },
      },
    }),
    [{ type: "intermediate", data: { type: "continue_prompt", content: reply, timestamp: new Date().toISOString() } }],
  );
}

/** The section (heading chunk id, or the lead) each change falls in, on the base or the result. */
function sectionKeys(records: StagedChange[], base: WorkingDocument, working: WorkingDocument): Record<string, string> {
  const sectionOf = new Map<string, string>();
  for (const [label, doc] of [
    ["b", base],
    ["r", working],
  ] as const) {
    for (const s of doc.sections()) {
      for (const id of s.chunkIds) if (!sectionOf.has(id)) sectionOf.set(id, s.headingChunkId ?? `${label}:lead`);
    }
  }
  return Object.fromEntries(records.map((r) => [r.change_id, sectionOf.get(r.chunk_id) ?? r.chunk_id]));
}

/** A clear, user-facing error text for a job that failed. */
export function failureText(err: unknown): string {
  if (err instanceof RedlineError) return typeof err.detail === "string" ? err.detail : err.message;
  return "The job failed because of an internal error";
}
