// Queries on agent.jobs and agent.job_events. Small functions over a Knex or a transaction; the
// commands open transactions, these never do (except appendEvents, whose sequence needs one).
import type { Knex } from "@redline/service-kit";
import { SCHEMA } from "../migrations.js";
import type { JobEventRow, JobRow, JobStatus } from "../tables.js";

type Db = Knex | Knex.Transaction;
export const T = { jobs: `${SCHEMA}.jobs`, events: `${SCHEMA}.job_events` };

/** An event to append: its type and data object. */
export interface NewEvent {
  type: string;
  data: Record<string, unknown>;
}

/** The owner's job or undefined (unknown, cleaned up and foreign ids read alike). */
export async function findJob(db: Db, ownerId: string, jobId: string): Promise<JobRow | undefined> {
  return db<JobRow>(T.jobs).where({ id: jobId, owner_id: ownerId }).first();
}

/** The owner's jobs, most recent first; optional status and session filters. */
export async function listJobs(
  db: Db,
  ownerId: string,
  filter: { status?: string; sessionId?: string; limit: number },
): Promise<JobRow[]> {
  const q = db<JobRow>(T.jobs).where({ owner_id: ownerId });
  if (filter.status) q.andWhere({ status: filter.status as JobStatus });
  if (filter.sessionId) q.andWhere({ session_id: filter.sessionId });
  return q
    .orderBy([
      { column: "created_at", order: "desc" },
      { column: "id", order: "desc" },
    ])
    .limit(filter.limit);
}

/** Events of a job with a sequence above `after`, in order. */
export async function eventsAfter(db: Db, jobId: string, after: number): Promise<JobEventRow[]> {
  return db<JobEventRow>(T.events).where({ job_id: jobId }).andWhere("sequence", ">", after).orderBy("sequence");
}

/** Events of several jobs (list endpoints), grouped by job id. */
export async function eventsOf(db: Db, jobIds: string[]): Promise<Map<string, JobEventRow[]>> {
  const out = new Map<string, JobEventRow[]>();
  if (jobIds.length === 0) return out;
  const rows = await db<JobEventRow>(T.events).whereIn("job_id", jobIds).orderBy(["job_id", "sequence"]);
  for (const r of rows) out.set(r.job_id, [...(out.get(r.job_id) ?? []), r]);
  return out;
}

/** Event rows per insert statement. */
const EVENT_BATCH = 1000;

/**
 * Appends events under the job's row lock so sequences are gapless and in commit order; the
 * caller's transaction makes them atomic with a status change. Returns the stored rows.
 */
export async function appendEvents(trx: Knex.Transaction, jobId: string, events: NewEvent[]): Promise<JobEventRow[]> {
  if (events.length === 0) return [];
  const [row] = await trx(T.jobs)
    .where({ id: jobId })
    .increment("next_sequence", events.length)
    .returning<{ next_sequence: number }[]>("next_sequence");
  if (!row) return [];
  const first = row.next_sequence - events.length;
  const rows = events.map((e, i) => ({ job_id: jobId, sequence: first + i, type: e.type, data: e.data }));
  // A turn staging many changes emits one proposed_change each: batches keep every statement
  // far below Postgres's 65,535 bind parameters (4 a row); the caller's transaction keeps them atomic.
  const stored: JobEventRow[] = [];
  for (let i = 0; i < rows.length; i += EVENT_BATCH)
    stored.push(
      ...(await trx<JobEventRow>(T.events)
        .insert(rows.slice(i, i + EVENT_BATCH))
        .returning("*")),
    );
  return stored;
}

/**
 * Claims the oldest runnable job for `worker`: a pending one (not handed to a live worker at its
 * creation, see claimHandedJob), or an in_progress one whose lease
 * expired (its worker died) with attempts left. FOR UPDATE SKIP LOCKED lets several workers and
 * instances claim concurrently without waiting on each other.
 */
export async function claimJob(db: Knex, worker: string, leaseMs: number, maxAttempts: number): Promise<JobRow | null> {
  const res = await db.raw<{ rows: JobRow[] }>(
    `update ${T.jobs} j
        set status = 'in_progress',
            updated_at = case when j.status = 'in_progress' then j.updated_at else now() end,
            lease_owner = ?,
            lease_expires_at = now() + (? * interval '1 millisecond'),
            heartbeat_at = now(),
            attempts = j.attempts + 1
      where j.id = (
        select id from ${T.jobs}
         where not cancel_requested
           and ((status = 'pending' and (lease_expires_at is null or lease_expires_at < now()))
                or (status = 'in_progress' and lease_expires_at < now() and attempts < ?))
         order by created_at
         for update skip locked
         limit 1)
      returning j.*`,
    [worker, leaseMs, maxAttempts],
  );
  return res.rows[0] ?? null;
}

/**
 * Claims a job handed to `worker` at its creation (pending, leased to it): null when it was
 * cancelled or its lease lapsed meanwhile (another worker may own it now).
 */
export async function claimHandedJob(db: Knex, jobId: string, worker: string, leaseMs: number): Promise<JobRow | null> {
  const res = await db.raw<{ rows: JobRow[] }>(
    `update ${T.jobs}
        set status = 'in_progress', updated_at = now(), heartbeat_at = now(), attempts = attempts + 1,
            lease_expires_at = now() + (? * interval '1 millisecond')
      where id = ? and status = 'pending' and lease_owner = ? and not cancel_requested
      returning *`,
    [leaseMs, jobId, worker],
  );
  return res.rows[0] ?? null;
}

/** Extends the lease; returns whether a cancel was asked, or null when the lease was lost. */
export async function heartbeat(db: Knex, jobId: string, worker: string, leaseMs: number): Promise<boolean | null> {
  const rows = await db(T.jobs)
    .where({ id: jobId, lease_owner: worker, status: "in_progress" })
    .update({
      lease_expires_at: db.raw("now() + (? * interval '1 millisecond')", [leaseMs]),
      heartbeat_at: db.fn.now(),
    })
    .returning<{ cancel_requested: boolean }[]>("cancel_requested");
  return rows[0] ? rows[0].cancel_requested : null;
}

/** Jobs whose worker died: lease expired and attempts used up, or a cancel that nobody carries out. */
export async function strandedJobs(db: Knex, maxAttempts: number): Promise<JobRow[]> {
  return db<JobRow>(T.jobs)
    .where({ status: "in_progress" })
    .andWhere("lease_expires_at", "<", db.fn.now())
    .andWhere((q) => q.where("attempts", ">=", maxAttempts).orWhere({ cancel_requested: true }))
    .limit(100);
}

/** Deletes terminal jobs completed before `olderThanMs` ago (events go with them); returns the count. */
export async function deleteExpired(db: Knex, olderThanMs: number): Promise<number> {
  return db(T.jobs)
    .whereIn("status", ["completed", "failed", "cancelled"])
    .andWhere("completed_at", "<", db.raw("now() - (? * interval '1 millisecond')", [olderThanMs]))
    .delete();
}

/** Open jobs of a session (pending, in_progress, awaiting_approval). */
export async function countActive(db: Db, ownerId: string, sessionId: string): Promise<number> {
  const [row] = await db(T.jobs)
    .where({ owner_id: ownerId, session_id: sessionId })
    .whereIn("status", ["pending", "in_progress", "awaiting_approval"])
    .count<{ count: string }[]>("* as count");
  return Number(row?.count ?? 0);
}
