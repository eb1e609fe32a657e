// What a job's turn records when a decision or a cancel ends it (the worker's own ending is
// run-job.ts finishCommitted): the charge settled for what was applied, the turn appended.
import { agentV1 } from "@redline/grpc-stubs";
import type { AgentContext } from "../context.js";
import type { JobRow, JobState } from "../db/tables.js";
import { billedOperations, finishTurn } from "../turn/ledger.js";
import { jobOpts } from "./actor.js";

type Staged = NonNullable<JobState["staged"]>;

/** Distinct sections touched by the applied changes (billing: 1 more operation per 25). */
function sectionsOf(staged: Staged): number {
  return new Set(staged.applied.map((c) => staged.sectionOf[c.change_id] ?? c.chunk_id)).size;
}

/**
 * Settles an approval job's charge for the applied changes and records its turn, with `reply`;
 * `memory` says whether the instruction joins the memory note (not for a cancelled turn).
 */
export async function recordApprovalTurn(
  ctx: AgentContext,
  row: JobRow,
  staged: Staged,
  reply: string,
  memory: { remember: boolean; memoryKey: string },
) {
  const last = staged.applied.length > 0 ? staged.headVersionId : "";
  return finishTurn(ctx, jobOpts(ctx, row), {
    chargeKey: row.charge_key,
    operations: billedOperations(sectionsOf(staged), staged.applied.length),
    sessionId: row.session_id,
    userMessage: row.metadata.message ?? "",
    reply,
    checkpointVersionId: staged.checkpointVersionId,
    documentId: last ? staged.durableId : "",
    versionId: last,
    title: staged.title,
    ...memory,
  });
}

/**
 * Settles a job paused at its continue prompt for what it committed and records its turn, with
 * `reply`; `memory` as for recordApprovalTurn. Also returns the committed part's document_changes.
 */
export async function recordPausedTurn(
  ctx: AgentContext,
  row: JobRow,
  paused: NonNullable<JobState["paused"]>,
  reply: string,
  memory: { remember: boolean; memoryKey: string },
) {
  const documentChanges = paused.documentChanges ? agentV1.DocumentChanges.fromJSON(paused.documentChanges) : undefined;
  const finished = await finishTurn(ctx, jobOpts(ctx, row), {
    chargeKey: row.charge_key,
    operations: billedOperations(paused.sections, paused.opsCount),
    sessionId: row.session_id,
    userMessage: row.metadata.message ?? "",
    reply,
    checkpointVersionId: paused.checkpointVersionId,
    documentId: documentChanges?.documentId ?? "",
    versionId: documentChanges?.versionId ?? "",
    title: "",
    ...memory,
  });
  return { ...finished, documentChanges };
}

/** The memory note a job's turn adds its message to, as a completed sync turn does. */
export function jobMemory(row: JobRow): { remember: boolean; memoryKey: string } {
  return { remember: true, memoryKey: agentV1.ChatRequest.fromJSON(row.request).crossSessionMemoryKey };
}
