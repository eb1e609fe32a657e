// Agent chat jobs and ingest attachment jobs as the spec's job object (interface-spec, Job).
import { ENVELOPE_EVENT_TYPES, type JobEvent } from "@redline/event-contracts";
import type { agentJobsV1, ingestFilesV1 } from "@redline/grpc-stubs";
import { type Principal, required } from "@redline/service-kit";
import { chatResponseToJson } from "../chat/mappers.js";
import { changeRecordToJson } from "../shared/mappers.js";
import { JOB_STATUSES, type JobJson } from "./schemas.js";

function iso(date: Date | undefined): string {
  return date && !Number.isNaN(date.getTime()) ? date.toISOString() : new Date(0).toISOString();
}

function status(value: string): JobJson["status"] {
  return (JOB_STATUSES as readonly string[]).includes(value) ? (value as JobJson["status"]) : "pending";
}

/** The data object of a stored event ({} when it has none). */
export function eventData(event: agentJobsV1.JobEvent): Record<string, unknown> {
  return event.data ?? {};
}

/** The envelope's `content` of stored data: its string `content`, else (events stored before the envelope) the data JSON-encoded. */
function envelopeContent(type: string, data: Record<string, unknown>): string {
  if (typeof data.content === "string") return data.content;
  const { type: _type, sequence: _sequence, timestamp: _timestamp, ...rest } = data;
  if (type === "proposed_change_batch") {
    const changes = Array.isArray(rest.changes) ? rest.changes : [];
    return JSON.stringify({ batch_id: rest.batch_id ?? "", batch_total: changes.length, changes });
  }
  return JSON.stringify(rest);
}

/**
 * The SSE `data` of an event (unshown-parts.md, "Progress stream (SSE)", wire envelope). For
 * document_sync, intermediate, proposed_change and proposed_change_batch: the stored data (whose
 * top-level fields current readers may use) with `{type, content, sequence, timestamp}` set —
 * `type` the event name, `content` a string (for proposals the JSON-encoded change record or
 * batch), `sequence` the event's sequence (also its SSE id), `timestamp` its creation time ISO
 * 8601. Other events (final, usage, error, status) keep their data as stored.
 */
export function sseEventData(e: JobEvent): Record<string, unknown> {
  if (!ENVELOPE_EVENT_TYPES.includes(e.type)) return e.data;
  return {
    ...e.data,
    type: e.type,
    content: envelopeContent(e.type, e.data),
    sequence: e.sequence,
    timestamp: e.created_at,
  };
}

/**
 * An attachment_processing job as JSON, from ingest's attachment job (whose status ingest maps
 * from the attachment's state: processing → in_progress, deleted unfinished → cancelled);
 * `result` when completed, `error` when failed; metadata names the file (filename, file_size in
 * bytes, content_type). The job belongs to the caller's owner scope, so the ids are the caller's.
 */
export function attachmentJobToJson(job: ingestFilesV1.AttachmentJob, principal: Principal | null): JobJson {
  const att = required(job.attachment, "attachment");
  const jobStatus = status(job.status);
  const ended = jobStatus === "completed" || jobStatus === "failed" || jobStatus === "cancelled";
  return {
    job_id: att.attachmentId,
    session_id: att.sessionId,
    job_type: "attachment_processing",
    status: jobStatus,
    created_at: iso(att.createdAt),
    updated_at: iso(att.updatedAt),
    progress: ended ? 100 : jobStatus === "in_progress" ? 50 : 0,
    organization_id: principal?.organizationId || null,
    user_id: principal?.organizationId ? null : (principal?.userId ?? null),
    ...(jobStatus === "completed" && {
      result: {
        response: `Processed ${att.filename}: ${att.textLength} characters of text in ${att.chunkCount} chunks.`,
        session_id: att.sessionId,
        attachment_id: att.attachmentId,
      },
    }),
    ...(jobStatus === "failed" && { error: att.error }),
    metadata: {
      message: "",
      document_html_provided: false,
      filename: att.filename,
      file_size: Number(att.sizeBytes),
      content_type: att.contentType,
    },
  };
}

/** Jobs of every kind, newest first (created_at, then job_id), the first `limit` of them. */
export function newestJobs(jobs: JobJson[], limit: number): JobJson[] {
  return jobs
    .sort((a, b) => b.created_at.localeCompare(a.created_at) || b.job_id.localeCompare(a.job_id))
    .slice(0, limit);
}

/**
 * A chat job as JSON: `result` only when completed, `error` only when failed, pending changes
 * only when awaiting approval, events as metadata.intermediate_responses unless compact; the
 * uploaded file's filename, file_size and content_type in metadata (also compact).
 */
export function jobToJson(job: agentJobsV1.Job, plan: string, compact: boolean): JobJson {
  const mode = job.responseMode === "compact" ? "compact" : "full";
  return {
    job_id: job.jobId,
    session_id: job.sessionId,
    job_type: job.jobType === "attachment_processing" ? "attachment_processing" : "chat",
    status: status(job.status),
    created_at: iso(job.createdAt),
    updated_at: iso(job.updatedAt),
    progress: job.progress,
    organization_id: job.organizationId || null,
    user_id: job.userId || null,
    ...(job.result && !compact && { result: chatResponseToJson(job.result, mode, plan) }),
    ...(job.error !== undefined && { error: job.error }),
    metadata: {
      message: job.message,
      document_html_provided: job.documentHtmlProvided,
      // A job that loaded an upload names the file like an attachment job; content_type is left
      // out (never empty) for a job recorded before the agent kept it.
      ...(job.filename && { filename: job.filename, file_size: job.fileSize }),
      ...(job.filename && job.contentType && { content_type: job.contentType }),
      ...(job.status === "awaiting_approval" && {
        awaiting_kind: job.awaitingKind === "continue_prompt" ? "continue_prompt" : "changes",
      }),
      ...(job.status === "awaiting_approval" &&
        job.continuePrompt && {
          continue_prompt: {
            message: job.continuePrompt.message,
            operations_applied: job.continuePrompt.operationsApplied,
            sections_changed: job.continuePrompt.sectionsChanged,
          },
        }),
      ...(job.status === "awaiting_approval" &&
        job.awaitingKind === "changes" && {
          pending_changes: job.pendingChanges.map((p) => ({
            ...changeRecordToJson(p.record ?? emptyRecord()),
            batch_id: p.batchId,
            batch_total: p.batchTotal,
          })),
        }),
      ...(job.feedback.length > 0 && { feedback: job.feedback }),
      ...(job.cancelRequested && { cancel_requested: true }),
      ...(!compact && {
        intermediate_responses: job.events.map((e) => {
          const data = eventData(e);
          const envelope = ENVELOPE_EVENT_TYPES.includes(e.type);
          return {
            type: typeof data.type === "string" ? data.type : e.type,
            // content is always a string, as typed clients read it: the final event's result is
            // the job's `result` (not repeated: ""), envelope events carry the stream's content,
            // and other events (usage, error) their data object JSON-encoded, like proposals.
            content:
              e.type === "final"
                ? ""
                : envelope
                  ? envelopeContent(e.type, data)
                  : typeof data.content === "string"
                    ? data.content
                    : JSON.stringify(data),
            sequence: e.sequence,
            timestamp: iso(e.createdAt),
          };
        }),
      }),
    },
  };
}

function emptyRecord() {
  return {
    changeId: "",
    operation: "edit",
    chunkId: "",
    documentId: "",
    oldHtml: "",
    newHtml: "",
    aiExplanation: "",
    insertAfterChunkId: "",
  };
}
