// SQL of documents.outbox: events appended in the commit's transaction, relayed to NATS, polled.

import type { Knex } from "@redline/service-kit";
import { uuidsOf } from "@redline/service-kit";
import { type Db, type OutboxRow, TABLES as T } from "../tables.js";

/** Takes the transaction-scoped lock every outbox writer holds from before its id is drawn to commit. */
export const OUTBOX_LOCK = "select pg_advisory_xact_lock(hashtext('redline.documents.outbox'))";

/**
 * Appends an event to the outbox. The advisory lock makes outbox ids commit in id order, so a
 * poller reading `id > cursor` never skips an event that commits late. The row keeps the
 * traceparent of the RPC writing it, so the relay publishes within that trace.
 */
export async function appendOutbox(
  db: Knex.Transaction,
  row: Omit<OutboxRow, "id" | "created_at" | "published_at" | "traceparent"> & { traceparent?: string | null },
): Promise<string> {
  await db.raw(OUTBOX_LOCK);
  const [inserted] = await db(T.outbox)
    .insert({ ...row, payload: JSON.stringify(row.payload), traceparent: row.traceparent ?? null })
    .returning("id");
  return String(inserted.id);
}
/** The oldest `limit` outbox rows not yet published to NATS, in id order. */
export function unpublishedEvents(db: Db, limit: number): Promise<OutboxRow[]> {
  return db<OutboxRow>(T.outbox).whereNull("published_at").orderBy("id", "asc").limit(limit);
}

/** Marks outbox rows as published (after JetStream acked them). */
export async function markPublished(db: Db, ids: string[]): Promise<void> {
  await db(T.outbox).whereIn("id", ids).update({ published_at: db.fn.now() });
}
/** Outbox events of the owner's documents after `afterId`, ascending; one more than `limit` tells has_more. */
export function eventsAfter(
  db: Db,
  ownerId: string,
  q: { documentIds: string[]; afterId: number; excludeSessionId: string; types: string[]; limit: number },
): Promise<OutboxRow[]> {
  const ids = uuidsOf(q.documentIds);
  if (ids.length === 0) return Promise.resolve([]);
  const query = db<OutboxRow>(T.outbox)
    .where({ owner_id: ownerId })
    .whereIn("document_id", ids)
    .whereIn("event_type", q.types)
    .where("id", ">", q.afterId);
  if (q.excludeSessionId) query.whereNot({ session_id: q.excludeSessionId });
  return query.orderBy("id", "asc").limit(q.limit + 1);
}

/** Appends a `document_updated` event (the change is in `payload.kind`) to the outbox; see appendOutbox. */
export function appendDocumentUpdated(
  db: Knex.Transaction,
  e: {
    ownerId: string;
    documentId: string;
    versionId: string;
    sessionId: string;
    payload: Record<string, unknown>;
    traceparent?: string | null;
  },
): Promise<string> {
  return appendOutbox(db, {
    event_type: "document_updated",
    owner_id: e.ownerId,
    document_id: e.documentId,
    version_id: e.versionId,
    session_id: e.sessionId,
    payload: e.payload,
    traceparent: e.traceparent,
  });
}
