// Attachments seen as attachment_processing jobs (interface-spec, Job; GET /v1/jobs and
// GET /v1/jobs/{att_id}): the attachment states mapped onto the job statuses, a delete before
// processing ended as a cancel, and the spec's retention (a job is removed 1 hour after it ends).
import { NotFoundError } from "@redline/service-kit";
import type { IngestContext } from "../context.js";
import * as store from "../db/store/attachments.js";
import type { AttachmentRow } from "../db/tables.js";
import { requireStorage } from "../storage.js";

/** Seconds an ended attachment job stays visible (interface-spec: jobs are removed 1 hour after completion). */
export const ATTACHMENT_JOB_RETENTION_SECONDS = 3600;

/** The job statuses an attachment job can be in (a subset of interface-spec's; never awaiting_approval). */
export type AttachmentJobStatus = "pending" | "in_progress" | "completed" | "failed" | "cancelled";

/** An attachment and the status of its job. */
export interface AttachmentJobView {
  row: AttachmentRow;
  status: AttachmentJobStatus;
}

/** The rows behind each job status: live rows by state, and deleted unfinished ones for cancelled. */
const ROWS_OF_STATUS = new Map<string, NonNullable<store.AttachmentJobFilter["rows"]>>([
  ["pending", { deleted: false, statuses: ["pending"] }],
  ["in_progress", { deleted: false, statuses: ["processing"] }],
  ["completed", { deleted: false, statuses: ["completed"] }],
  ["failed", { deleted: false, statuses: ["failed"] }],
  ["cancelled", { deleted: true, statuses: ["pending", "processing"] }],
]);

const STATUS_OF_STATE: Record<AttachmentRow["status"], AttachmentJobStatus> = {
  pending: "pending",
  processing: "in_progress",
  completed: "completed",
  failed: "failed",
};

/** The job of a visible row: a deleted one is cancelled (only unfinished deleted rows are visible). */
function jobOf(row: AttachmentRow): AttachmentJobView {
  return { row, status: row.deleted_at ? "cancelled" : STATUS_OF_STATE[row.status] };
}

/** What to list: a job status ("" = all; any other word matches none), a session ("" = all), a page size. */
export interface AttachmentJobQuery {
  status: string;
  sessionId: string;
  /** 1..200; 0 = 50, larger = 200. */
  limit: number;
}

/** The owner's visible attachment jobs, newest first; [] for a status no attachment job can have. */
export async function listAttachmentJobs(
  ctx: IngestContext,
  ownerId: string,
  query: AttachmentJobQuery,
): Promise<AttachmentJobView[]> {
  const rows = query.status ? ROWS_OF_STATUS.get(query.status) : undefined;
  if (query.status && !rows) return [];
  const limit = Math.min(200, Math.max(1, query.limit || 50));
  const filter = {
    ownerId,
    sessionId: query.sessionId || undefined,
    rows,
    retentionSeconds: ATTACHMENT_JOB_RETENTION_SECONDS,
  };
  return (await store.listAttachmentJobs(requireStorage(ctx).db, filter, limit)).map(jobOf);
}

/** One attachment job of the owner; NotFoundError (404) when unknown, another owner's or no longer visible. */
export async function getAttachmentJob(ctx: IngestContext, ownerId: string, id: string): Promise<AttachmentJobView> {
  const filter = { ownerId, retentionSeconds: ATTACHMENT_JOB_RETENTION_SECONDS };
  const row = await store.findAttachmentJob(requireStorage(ctx).db, filter, id);
  if (!row) throw new NotFoundError("Job not found: unknown, or removed 1 hour after it ended");
  return jobOf(row);
}
