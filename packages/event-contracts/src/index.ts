// The NATS contracts of Redline: subjects and payloads of job events and document events, shared
// by their producers (agent, documents) and consumers (gateway, tests, tools). Postgres stays
// the record of both; NATS only fans them out.

/** Core-NATS subject of one job's events (spec: progress stream). */
export function jobSubject(jobId: string): string {
  return `redline.jobs.v1.${jobId}`;
}

/** One job event on the wire: on NATS, and in the agent's GetJobEvents replay. */
export interface JobEvent {
  /** Per-job, from 1, gap-free. */
  sequence: number;
  /** The SSE event name (`status`, `proposed_change`, `final`, …). */
  type: string;
  /** The SSE data object. */
  data: Record<string, unknown>;
  /** ISO 8601. */
  created_at: string;
}

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

/** One document event as the outbox relay publishes it to JetStream. */
export interface DocumentEvent {
  /** The outbox row id: per database, increasing. */
  id: number;
  /** `document_created`, `document_updated`, … */
  type: string;
  owner_id: string;
  document_id: string;
  version_id: string | null;
  session_id: string | null;
  /** Change kind, chunk ids, title. */
  payload: Record<string, unknown>;
  created_at: string;
}
