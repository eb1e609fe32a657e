// Idempotency records of HTTP requests carrying an Idempotency-Key: all SQL of the feature.
// Each function is one self-contained statement (claim, read, store, release, sweep).
import type { Knex } from "@redline/service-kit";
import { type IdempotencyRecordRow, TABLES } from "../tables.js";

type Db = Knex | Knex.Transaction;

/** One key of one owner, with the hash of the request it was used for. */
export interface IdempotencyRef {
  ownerId: string;
  key: string;
  requestHash: string;
}

/** A response kept for replay. */
export interface StoredReply {
  status: number;
  headers: Record<string, string>;
  body: Buffer;
}

/** How long a key is remembered (the task's 24 h). */
export const IDEMPOTENCY_TTL_SECONDS = 24 * 60 * 60;

/**
 * Claims the key for a new request: inserts a running record, or takes over one that expired
 * (24 h), or one still running with the same request whose lease passed (its gateway died).
 * True when the caller now holds the key; false when a live record is in the way.
 */
export async function claimKey(db: Db, ref: IdempotencyRef, leaseSeconds: number): Promise<boolean> {
  const { rows } = await db.raw<{ rows: unknown[] }>(
    `insert into ${TABLES.idempotencyRecords} as r
       (owner_id, idempotency_key, request_hash, state, created_at, lease_until, expires_at)
     values (:owner, :key, :hash, 'running', now(), now() + :lease * interval '1 second',
             now() + :ttl * interval '1 second')
     on conflict (owner_id, idempotency_key) do update set
       request_hash = excluded.request_hash, state = 'running', status = null, headers = null, body = null,
       created_at = excluded.created_at, lease_until = excluded.lease_until, expires_at = excluded.expires_at
     where r.expires_at <= excluded.created_at
        or (r.state = 'running' and r.lease_until <= excluded.created_at and r.request_hash = excluded.request_hash)
     returning 1`,
    { owner: ref.ownerId, key: ref.key, hash: ref.requestHash, lease: leaseSeconds, ttl: IDEMPOTENCY_TTL_SECONDS },
  );
  return rows.length > 0;
}

/** The live record of the key (not expired), or undefined. */
export async function readRecord(
  db: Db,
  ownerId: string,
  key: string,
): Promise<Pick<IdempotencyRecordRow, "request_hash" | "state" | "status" | "headers" | "body"> | undefined> {
  return db<IdempotencyRecordRow>(TABLES.idempotencyRecords)
    .select("request_hash", "state", "status", "headers", "body")
    .where({ owner_id: ownerId, idempotency_key: key })
    .andWhere("expires_at", ">", db.fn.now())
    .first();
}

/** Stores the response of a running claim; false when the claim is no longer this request's. */
export async function storeReply(db: Db, ref: IdempotencyRef, reply: StoredReply): Promise<boolean> {
  const updated = await db<IdempotencyRecordRow>(TABLES.idempotencyRecords)
    .where({ owner_id: ref.ownerId, idempotency_key: ref.key, request_hash: ref.requestHash, state: "running" })
    .update({ state: "done", status: reply.status, headers: reply.headers, body: reply.body });
  return updated > 0;
}

/** Deletes a running claim so a retry runs the request again; false when none was held. */
export async function releaseKey(db: Db, ref: IdempotencyRef): Promise<boolean> {
  const deleted = await db<IdempotencyRecordRow>(TABLES.idempotencyRecords)
    .where({ owner_id: ref.ownerId, idempotency_key: ref.key, request_hash: ref.requestHash, state: "running" })
    .delete();
  return deleted > 0;
}

/** Deletes up to `limit` expired records (any owner); returns how many. */
export async function sweepExpired(db: Db, limit: number): Promise<number> {
  const { rowCount } = await db.raw<{ rowCount: number }>(
    `delete from ${TABLES.idempotencyRecords}
      where ctid = any(array(select ctid from ${TABLES.idempotencyRecords} where expires_at <= now() limit :limit))`,
    { limit },
  );
  return rowCount;
}
