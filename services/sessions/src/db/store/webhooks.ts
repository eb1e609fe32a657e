// SQL of webhook endpoints, the deliveries outbox and its attempts. Every endpoint statement of an
// RPC names the owner; the worker's statements run across owners (it delivers for everyone).
import type { Knex } from "@redline/service-kit";
import { T, type WebhookDeliveryRow, type WebhookDeliveryStatus, type WebhookEndpointRow } from "../tables.js";
import type { Db } from "./sessions.js";

/** Serializes an owner's endpoint creations (the per-account cap is checked in the same transaction). */
export async function lockOwnerEndpoints(trx: Knex.Transaction, ownerId: string): Promise<void> {
  await trx.raw("select pg_advisory_xact_lock(hashtext(?))", [`sessions.webhook_endpoints:${ownerId}`]);
}

/** How many endpoints the owner has. */
export async function countEndpoints(db: Db, ownerId: string): Promise<number> {
  const [row] = await db(T.webhookEndpoints).where({ owner_id: ownerId }).count<{ count: string }[]>("* as count");
  return Number(row?.count ?? 0);
}

/** Inserts an endpoint; returns the stored row. */
export async function insertEndpoint(db: Db, row: Omit<WebhookEndpointRow, "created_at">): Promise<WebhookEndpointRow> {
  const [stored] = await db(T.webhookEndpoints).insert(row).returning<WebhookEndpointRow[]>("*");
  return stored;
}

/** The owner's endpoints, newest first. */
export function listEndpoints(db: Db, ownerId: string): Promise<WebhookEndpointRow[]> {
  return db<WebhookEndpointRow>(T.webhookEndpoints)
    .where({ owner_id: ownerId })
    .orderBy([
      { column: "created_at", order: "desc" },
      { column: "id", order: "desc" },
    ]);
}

/** The owner's endpoint, or undefined (unknown and foreign ids read alike). */
export function findEndpoint(db: Db, ownerId: string, id: string): Promise<WebhookEndpointRow | undefined> {
  return db<WebhookEndpointRow>(T.webhookEndpoints).where({ id, owner_id: ownerId }).first();
}

/** Deletes the owner's endpoint (its deliveries and attempts cascade); false when there was none. */
export async function deleteEndpoint(db: Db, ownerId: string, id: string): Promise<boolean> {
  return (await db(T.webhookEndpoints).where({ id, owner_id: ownerId }).delete()) > 0;
}

/** The owner's endpoints subscribed to `eventType`. */
export function subscribedEndpoints(db: Db, ownerId: string, eventType: string): Promise<WebhookEndpointRow[]> {
  return db<WebhookEndpointRow>(T.webhookEndpoints)
    .where({ owner_id: ownerId })
    .andWhereRaw("? = any(events)", [eventType]);
}

/** A delivery to enqueue. */
export type NewDelivery = Pick<
  WebhookDeliveryRow,
  "id" | "endpoint_id" | "owner_id" | "event_id" | "event_type" | "body"
>;

/**
 * Enqueues deliveries, skipping any (endpoint, event) already enqueued: the unique key is what
 * makes a redelivered JetStream message enqueue nothing the second time. Returns how many were new.
 */
export async function insertDeliveries(db: Db, rows: NewDelivery[]): Promise<number> {
  if (rows.length === 0) return 0;
  const inserted = await db(T.webhookDeliveries)
    .insert(rows)
    .onConflict(["endpoint_id", "event_id"])
    .ignore()
    .returning<{ id: string }[]>("id");
  return inserted.length;
}

/** A claimed delivery with what the worker needs of its endpoint. */
export type ClaimedDelivery = WebhookDeliveryRow & Pick<WebhookEndpointRow, "url" | "secret">;

/**
 * Leases up to `limit` due pending deliveries for `leaseMs` ms: FOR UPDATE SKIP LOCKED and the
 * lease make several sessions replicas take disjoint rows, and a worker that dies mid-attempt
 * leaves its rows to another once the lease ran out.
 */
export async function claimDueDeliveries(db: Knex, limit: number, leaseMs: number): Promise<ClaimedDelivery[]> {
  const res = await db.raw<{ rows: ClaimedDelivery[] }>(
    `with due as (
       select id from ${T.webhookDeliveries}
        where status = 'pending' and next_attempt_at <= now()
          and (lease_expires_at is null or lease_expires_at < now())
        order by next_attempt_at
        for update skip locked
        limit ?),
     leased as (
       update ${T.webhookDeliveries} d
          set lease_expires_at = now() + (? * interval '1 millisecond')
         from due where d.id = due.id
       returning d.*)
     select leased.*, e.url, e.secret from leased join ${T.webhookEndpoints} e on e.id = leased.endpoint_id`,
    [limit, leaseMs],
  );
  return res.rows;
}

/** The outcome of one attempt and where it leaves the delivery. */
export interface AttemptRecord {
  deliveryId: string;
  responseCode: number | null;
  error: string | null;
  durationMs: number;
  status: WebhookDeliveryStatus;
  /** The next attempt's time while pending; ignored otherwise. */
  nextAttemptAt: Date | null;
}

/** Appends the attempt and updates the delivery (counts, last outcome, status, lease released). */
export async function recordAttempt(trx: Knex.Transaction, a: AttemptRecord): Promise<void> {
  await trx(T.webhookAttempts).insert({
    delivery_id: a.deliveryId,
    response_code: a.responseCode,
    error: a.error,
    duration_ms: a.durationMs,
  });
  await trx(T.webhookDeliveries)
    .where({ id: a.deliveryId })
    .update({
      attempts: trx.raw("attempts + 1"),
      status: a.status,
      last_response_code: a.responseCode,
      last_error: a.error,
      lease_expires_at: null,
      ...(a.status === "pending" && a.nextAttemptAt && { next_attempt_at: a.nextAttemptAt }),
      ...(a.status === "delivered" && { delivered_at: trx.fn.now() }),
    });
}

/** The endpoint's deliveries, newest first, at most `limit`. */
export function listDeliveries(
  db: Db,
  ownerId: string,
  endpointId: string,
  limit: number,
): Promise<WebhookDeliveryRow[]> {
  return db<WebhookDeliveryRow>(T.webhookDeliveries)
    .where({ owner_id: ownerId, endpoint_id: endpointId })
    .orderBy([
      { column: "created_at", order: "desc" },
      { column: "id", order: "desc" },
    ])
    .limit(limit);
}

/** Pending deliveries and the age of the oldest due one (seconds), for the backlog gauges. */
export async function deliveryBacklog(db: Knex): Promise<{ count: number; age: number | null }> {
  const res = await db.raw<{ rows: { count: number; age: number | null }[] }>(
    `select count(*)::int as count, extract(epoch from now() - min(next_attempt_at))::float8 as age
       from ${T.webhookDeliveries} where status = 'pending' and next_attempt_at <= now()`,
  );
  return res.rows[0] ?? { count: 0, age: null };
}
