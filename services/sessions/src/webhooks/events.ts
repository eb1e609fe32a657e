// The webhook event catalog and the body of each event (docs/api.md, Webhooks): one place that
// maps the JetStream events (event-contracts) to the webhook type, owner, id and `data` object.
import type { DocumentEvent, JobLifecycleEvent, WebhookEventType } from "@redline/event-contracts";

/** One event ready to enqueue: whose it is, its id (the JetStream message id) and its body. */
export interface WebhookEvent {
  ownerId: string;
  /** Unique per event; the same event redelivered by JetStream keeps it (deliveries' unique key). */
  eventId: string;
  type: WebhookEventType;
  /** The JSON body POSTed: `{type, timestamp, data}`, timestamp ISO 8601 of the change. */
  body: string;
}

function bodyOf(type: WebhookEventType, timestamp: string, data: Record<string, unknown>): string {
  return JSON.stringify({ type, timestamp, data });
}

/** A job lifecycle event as a webhook: data `{job_id, session_id, status, error?}` (error only when failed). */
export function jobWebhookEvent(e: JobLifecycleEvent, messageId: string): WebhookEvent {
  const data = { job_id: e.job_id, session_id: e.session_id, status: e.status, ...(e.error && { error: e.error }) };
  return { ownerId: e.owner_id, eventId: messageId, type: e.type, body: bodyOf(e.type, e.created_at, data) };
}

/**
 * A `document_updated` event as a webhook `document.updated`: data `{document_id, version_id,
 * kind, session_id?, title?}`; `kind` says what happened (edit, save, restore, metadata, archived, …).
 */
export function documentWebhookEvent(e: DocumentEvent, messageId: string): WebhookEvent {
  const kind = typeof e.payload.kind === "string" ? e.payload.kind : "edit";
  const title = typeof e.payload.title === "string" ? e.payload.title : undefined;
  const data = {
    document_id: e.document_id,
    ...(e.version_id && { version_id: e.version_id }),
    kind,
    ...(e.session_id && { session_id: e.session_id }),
    ...(title !== undefined && { title }),
  };
  const type = "document.updated";
  return { ownerId: e.owner_id, eventId: messageId, type, body: bodyOf(type, e.created_at, data) };
}
