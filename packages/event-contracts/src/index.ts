// The NATS contracts of Redline: subjects and payloads of job events and document events, shared
// by their producers (agent, documents) and consumers (gateway, tests, tools). Postgres stays
// the record of both; NATS only fans them out. Payloads are zod schemas, the one source of their
// TypeScript types and of the AsyncAPI document (asyncapi.ts).

import { z } from "zod";

/** Core-NATS subject of one job's events (spec: progress stream). */
export function jobSubject(jobId: string): string {
  return `redline.jobs.v1.${jobId}`;
}

/**
 * One job event on the wire: on NATS, and in the agent's GetJobEvents replay. The schema is the
 * one source of this type and of the AsyncAPI document's payload (asyncapi.ts).
 */
export const JobEventSchema = z
  .object({
    sequence: z.number().int().min(1).describe("Per-job, from 1, gap-free."),
    type: z.string().describe("The SSE event name (`status`, `proposed_change`, `final`, …)."),
    data: z.record(z.string(), z.unknown()).describe("The SSE data object."),
    created_at: z.string().describe("ISO 8601."),
  })
  .describe("One event of an async chat job, as the progress stream sends it.");

/** One job event on the wire; see JobEventSchema. */
export type JobEvent = z.infer<typeof JobEventSchema>;

/**
 * Events whose SSE `data` is the envelope `{type, content, sequence, timestamp}` (unshown-parts.md,
 * "Progress stream (SSE)", wire envelope): `type` is the event name and `content` a string (the
 * HTML with chunk ids, the progress text, or the JSON-encoded change record / batch). The agent
 * stores `type` and `content` (plus the record's own fields at the top level for proposals); the
 * stream adds `sequence` and `timestamp` from the stored row, which the data cannot know before
 * it is inserted.
 */
export const ENVELOPE_EVENT_TYPES: readonly string[] = [
  "document_sync",
  "intermediate",
  "proposed_change",
  "proposed_change_batch",
];

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** Bytes of a job event for NATS. */
export function encodeJobEvent(event: JobEvent): Uint8Array {
  return encoder.encode(JSON.stringify(event));
}

/** A job event from NATS bytes; throws on bytes that are not one. */
export function decodeJobEvent(bytes: Uint8Array): JobEvent {
  const value = JSON.parse(decoder.decode(bytes)) as Partial<JobEvent>;
  if (typeof value?.sequence !== "number" || typeof value.type !== "string") throw new Error("not a job event");
  return value as JobEvent;
}

/** The `type` of document events, and the subject token that follows `redline.documents.v1.`. */
export const DOCUMENT_EVENT_TYPES = ["document_created", "document_updated"] as const;

/** One of DOCUMENT_EVENT_TYPES. */
export type DocumentEventType = (typeof DOCUMENT_EVENT_TYPES)[number];

/** JetStream stream holding document events (limits retention; see messaging.ensureStream). */
export const DOCUMENT_EVENTS_STREAM = "REDLINE_DOCUMENT_EVENTS";

/** Subjects the document events stream captures. */
export const DOCUMENT_EVENTS_SUBJECTS = ["redline.documents.v1.>"];

/** Subject of one document event: redline.documents.v1.<event_type>.<owner_id>. */
export function documentEventSubject(eventType: string, ownerId: string): string {
  return `redline.documents.v1.${eventType}.${ownerId}`;
}

/**
 * JetStream message id of an outbox row. Outbox ids are per database, so the document's UUID is
 * part of it: two deployments (or test stacks) sharing one NATS must not deduplicate each other.
 */
export function documentEventMessageId(row: { id: string | number; document_id: string }): string {
  return `doc-event-${row.document_id}-${row.id}`;
}

/**
 * One document event as the outbox relay publishes it to JetStream. The schema is the one source
 * of this type and of the AsyncAPI document's payload (asyncapi.ts).
 */
export const DocumentEventSchema = z
  .object({
    id: z.number().int().describe("The outbox row id: per database, increasing."),
    type: z.enum(DOCUMENT_EVENT_TYPES).describe("The event type, also the subject's fourth token."),
    owner_id: z.string().describe("The owning account or organization (UUID)."),
    document_id: z.string().describe("UUID of the saved document."),
    version_id: z.string().nullable().describe("The version the event produced, when it produced one."),
    session_id: z.string().nullable().describe("The session whose action caused it, when one did."),
    payload: z
      .record(z.string(), z.unknown())
      .describe("`kind` (edit, save, ai, metadata, archived, unarchived, …), `chunk_ids`, `summary`, `title`."),
    created_at: z.string().describe("ISO 8601."),
  })
  .describe("A saved document changed: created, edited, saved, renamed, archived or unarchived.");

/** One document event on JetStream; see DocumentEventSchema. */
export type DocumentEvent = z.infer<typeof DocumentEventSchema>;

/**
 * JetStream stream of job lifecycle events (a job completed, failed or awaiting approval), written
 * to the agent's job outbox in the statement that changes the status and relayed from there; the
 * webhooks consumer (sessions) enqueues deliveries from it. Progress events stay on core NATS
 * (jobSubject).
 */
export const JOB_LIFECYCLE_STREAM = "REDLINE_JOB_LIFECYCLE";

/** Subjects the job lifecycle stream captures. */
export const JOB_LIFECYCLE_SUBJECTS = ["redline.job-lifecycle.v1.>"];

/** The job statuses that produce a lifecycle event, and the event type each publishes. */
export const JOB_LIFECYCLE_EVENTS = {
  completed: "job.completed",
  failed: "job.failed",
  awaiting_approval: "job.awaiting_approval",
} as const;

/** Subject of one lifecycle event: redline.job-lifecycle.v1.<status>.<owner_id>. */
export function jobLifecycleSubject(status: string, ownerId: string): string {
  return `redline.job-lifecycle.v1.${status}.${ownerId}`;
}

/**
 * JetStream message id of a job outbox row: the job id and the row id (outbox ids are per database,
 * the job's id is not), so a relay publishing twice stores the event once.
 */
export function jobLifecycleMessageId(row: { id: string | number; job_id: string }): string {
  return `job-event-${row.job_id}-${row.id}`;
}

/**
 * One job lifecycle event as the agent's relay publishes it. The schema is the one source of this
 * type (and may be of an AsyncAPI channel, like the other payloads).
 */
export const JobLifecycleEventSchema = z
  .object({
    id: z.number().int().describe("The job outbox row id: per database, increasing."),
    type: z
      .enum([JOB_LIFECYCLE_EVENTS.completed, JOB_LIFECYCLE_EVENTS.failed, JOB_LIFECYCLE_EVENTS.awaiting_approval])
      .describe("The webhook event type: job.completed, job.failed or job.awaiting_approval."),
    owner_id: z.string().describe("The owning account or organization."),
    job_id: z.string().describe("The job (job_…)."),
    session_id: z.string().describe("The job's session."),
    status: z.string().describe("The job's status after the change (completed, failed, awaiting_approval)."),
    error: z.string().nullable().describe("The failure's user-facing message; null unless failed."),
    created_at: z.string().describe("ISO 8601: when the status changed."),
  })
  .describe("An async chat job completed, failed or started awaiting approval.");

/** One job lifecycle event on JetStream; see JobLifecycleEventSchema. */
export type JobLifecycleEvent = z.infer<typeof JobLifecycleEventSchema>;

/**
 * The event types an outbound webhook endpoint may subscribe to (docs/api.md, Webhooks): the job
 * lifecycle events above and `document.updated`. The gateway validates requests with them; the
 * sessions webhooks service enqueues and checks them.
 */
export const WEBHOOK_EVENT_TYPES = [
  JOB_LIFECYCLE_EVENTS.completed,
  JOB_LIFECYCLE_EVENTS.failed,
  JOB_LIFECYCLE_EVENTS.awaiting_approval,
  "document.updated",
] as const;

/** One of WEBHOOK_EVENT_TYPES. */
export type WebhookEventType = (typeof WEBHOOK_EVENT_TYPES)[number];

/** Longest webhook target URL and endpoint description (characters), bounded by gateway and sessions alike. */
export const WEBHOOK_LIMITS = { urlChars: 2048, descriptionChars: 200 } as const;
