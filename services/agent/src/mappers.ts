// Rows and command results as the agent's proto messages.
import { type agentJobsV1, agentV1, type documentsV1 } from "@redline/grpc-stubs";
import type { JobEventRow, JobRow, StagedChange } from "./db/tables.js";

/** A staged change as the documents service's change record. */
export function stagedToRecord(c: StagedChange): documentsV1.ChangeRecord {
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

/** A stored event as the proto JobEvent (its jsonb data object as a Struct). */
function eventToProto(e: JobEventRow): agentJobsV1.JobEvent {
  return {
    sequence: Number(e.sequence),
    type: e.type,
    data: e.data,
    createdAt: new Date(e.created_at),
  };
}

/** The proto Job of a row; `compact` leaves out the result body and the events (endpoint 20). */
export function jobToProto(row: JobRow, events: JobEventRow[], compact: boolean): agentJobsV1.Job {
  const md = row.metadata;
  const awaiting = row.status === "awaiting_approval";
  const pending = awaiting && md.awaiting_kind === "changes" ? (md.pending_changes ?? []) : [];
  return {
    jobId: row.id,
    sessionId: row.session_id,
    jobType: row.job_type,
    status: row.status,
    progress: row.progress,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    userId: row.user_id ?? "",
    organizationId: row.organization_id ?? "",
    result:
      row.status === "completed" && row.result && !compact ? agentV1.ChatResponse.fromJSON(row.result) : undefined,
    error: row.status === "failed" ? (row.error ?? "The job failed") : undefined,
    message: md.message ?? "",
    documentHtmlProvided: md.document_html_provided ?? false,
    filename: md.filename ?? "",
    fileSize: md.file_size ?? 0,
    contentType: md.content_type ?? "",
    pendingChanges: pending.map((c) => ({ record: stagedToRecord(c), batchId: c.batch_id, batchTotal: c.batch_total })),
    events: compact ? [] : events.map(eventToProto),
    awaitingKind: awaiting ? (md.awaiting_kind ?? "") : "",
    responseMode: md.response_mode ?? "full",
    feedback: md.feedback ?? [],
    cancelRequested: row.cancel_requested,
    continuePrompt: continuePromptOf(row),
  };
}

/** The paused edit's question and progress, while the job waits at a continue_prompt. */
function continuePromptOf(row: JobRow): agentJobsV1.ContinuePrompt | undefined {
  const paused = row.state.paused;
  if (row.status !== "awaiting_approval" || row.metadata.awaiting_kind !== "continue_prompt" || !paused)
    return undefined;
  return { message: paused.reply, operationsApplied: paused.opsCount, sectionsChanged: paused.sections };
}
