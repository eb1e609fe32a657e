// All SQL of agent.jobs and agent.job_events. Small functions over a Knex or a transaction; the
// commands open transactions, these never do. Every status change is one guarded statement
// (updateJob), which also appends its events, so sequences follow commit order, and writes the
// job outbox row of a completed, failed or awaiting-approval change (relayed to JetStream).
import { JOB_LIFECYCLE_EVENTS } from "@redline/event-contracts";
import type { Knex } from "@redline/service-kit";
import {
  type JobEventRow,
  type JobMetadata,
  type JobOutboxRow,
  type JobRow,
  type JobStatus,
  T,
  TERMINAL_STATUSES,
} from "../tables.js";

type Db = Knex | Knex.Transaction;

/** An event to append: its type and data object. */
export interface NewEvent {
  type: string;
  data: Record<string, unknown>;
}

/** What the row must look like for a change to apply. */
export interface Guard {
  status: JobStatus[];
  /** The lease owner (a worker finishing its own job). */
  leaseOwner?: string;
  /** The current status began at least this long ago, in ms (updated_at moves on a status change only). */
  inStatusForMs?: number;
}

/**
 * Fields a change may set. `metadata` is merged into the stored metadata: a key set to
 * undefined is removed, the others replace theirs.
 */
export type JobPatch = Partial<
  Pick<
    JobRow,
    | "status"
    | "progress"
    | "result"
    | "error"
    | "state"
    | "cancel_requested"
    | "lease_owner"
    | "lease_expires_at"
    | "attempts"
  >
> & { metadata?: Partial<JobMetadata> };

const JSON_COLUMNS = new Set(["result", "state"]);

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

/** A new job as stored: JSON columns as values (the store serializes them). */
export type NewJob = Pick<
  JobRow,
  | "id"
  | "owner_id"
  | "user_id"
  | "organization_id"
  | "principal"
  | "session_id"
  | "job_type"
  | "request"
  | "metadata"
  | "charge_key"
  | "state"
> &
  Partial<Pick<JobRow, "traceparent">>;

/**
 * Inserts a pending job; with `leasedTo`, leased to that worker for `leaseMs` (a job handed to
 * an idle worker at its creation: no other worker claims it while the lease is live).
 */
export async function insertJob(db: Db, job: NewJob, leasedTo?: { worker: string; leaseMs: number }): Promise<JobRow> {
  const [row] = await db(T.jobs)
    .insert({
      ...job,
      principal: JSON.stringify(job.principal),
      request: JSON.stringify(job.request),
      metadata: JSON.stringify(job.metadata),
      state: JSON.stringify(job.state),
      status: "pending",
      progress: 0,
      ...(leasedTo && {
        lease_owner: leasedTo.worker,
        lease_expires_at: db.raw("now() + (? * interval '1 millisecond')", [leasedTo.leaseMs]),
      }),
    })
    .returning<JobRow[]>("*");
  return row;
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

/**
 * The insert of `events` as a CTE after the CTE `upd` (which returns the job's id and its
 * next_sequence already advanced by the count), with its bindings. One jsonb parameter carries
 * every event, so a turn staging thousands of changes stays one statement.
 */
function eventsCte(events: NewEvent[]): { sql: string; bindings: unknown[] } {
  return {
    sql: `ev as (
       insert into ${T.events} (job_id, sequence, type, data)
       select upd.id, upd.next_sequence - ? + e.ord - 1, e.item->>'type', e.item->'data'
         from upd cross join jsonb_array_elements(cast(? as jsonb)) with ordinality as e(item, ord)
       returning *
     )`,
    bindings: [events.length, JSON.stringify(events)],
  };
}

/** Statuses whose change also writes a lifecycle event to the job outbox (event-contracts JOB_LIFECYCLE_EVENTS). */
const LIFECYCLE_STATUSES: ReadonlySet<string> = new Set(Object.keys(JOB_LIFECYCLE_EVENTS));

/** The outbox insert of a lifecycle status change, in the change's own statement (exactly one row per change). */
const OUTBOX_CTE = `ob as (
       insert into ${T.jobOutbox} (job_id, owner_id, session_id, status, error)
       select upd.id, upd.owner_id, upd.session_id, upd.status, upd.error from upd
       returning id
     )`;

const STORED_EVENTS = "coalesce((select json_agg(ev order by ev.sequence) from ev), '[]'::json)";

/** SET clauses and bindings of a patch (status bookkeeping included). */
function setClauses(patch: JobPatch, eventCount: number): { sets: string[]; bindings: unknown[] } {
  const sets: string[] = [];
  const bindings: unknown[] = [];
  const { metadata, ...columns } = patch;
  for (const [column, value] of Object.entries(columns)) {
    if (value === undefined) continue;
    sets.push(`"${column}" = ?`);
    bindings.push(JSON_COLUMNS.has(column) && value !== null ? JSON.stringify(value) : value);
  }
  if (metadata) {
    const removed = Object.keys(metadata).filter((k) => metadata[k as keyof JobMetadata] === undefined);
    sets.push(`metadata = (metadata${removed.map(() => " - ?").join("")}) || cast(? as jsonb)`);
    bindings.push(...removed, JSON.stringify(metadata));
  }
  if (patch.status) {
    // updated_at moves on a status change only; completed_at and the lease end with a terminal one.
    sets.push("updated_at = case when status is distinct from ? then now() else updated_at end");
    bindings.push(patch.status);
    if (TERMINAL_STATUSES.includes(patch.status))
      sets.push("completed_at = now()", "lease_owner = null", "lease_expires_at = null", "cancel_requested = false");
  }
  sets.push("next_sequence = next_sequence + ?");
  bindings.push(eventCount);
  return { sets, bindings };
}

/**
 * Applies `patch` and appends `events` when the guard holds, in one statement (no transaction
 * round trips): the guarded update, the sequence advance and the events' insert. Returns the
 * new row and the stored events, or null when the job is gone or the guard failed.
 */
export async function updateJob(
  db: Db,
  jobId: string,
  guard: Guard,
  patch: JobPatch,
  events: NewEvent[],
): Promise<{ updated: JobRow; stored: JobEventRow[] } | null> {
  const { sets, bindings } = setClauses(patch, events.length);
  const where = ["id = ?", `status in (${guard.status.map(() => "?").join(", ")})`];
  bindings.push(jobId, ...guard.status);
  if (guard.leaseOwner !== undefined) {
    where.push("lease_owner = ?");
    bindings.push(guard.leaseOwner);
  }
  if (guard.inStatusForMs !== undefined) {
    where.push("updated_at <= now() - (? * interval '1 millisecond')");
    bindings.push(guard.inStatusForMs);
  }
  const ev = eventsCte(events);
  const res = await db.raw<{ rows: (JobRow & { stored_events: JobEventRow[] })[] }>(
    `with upd as (update ${T.jobs} set ${sets.join(", ")} where ${where.join(" and ")} returning *),
     ${ev.sql}${patch.status && LIFECYCLE_STATUSES.has(patch.status) ? `,\n     ${OUTBOX_CTE}` : ""}
     select upd.*, ${STORED_EVENTS} as stored_events from upd`,
    [...bindings, ...ev.bindings],
  );
  const row = res.rows[0];
  if (!row) return null;
  const { stored_events, ...updated } = row;
  return { updated: updated as JobRow, stored: stored_events };
}

/** Appends events without a status change (progress text), raising progress to at least `progress`. */
export async function appendEvents(
  db: Db,
  jobId: string,
  events: NewEvent[],
  progress?: number,
): Promise<JobEventRow[]> {
  const ev = eventsCte(events);
  const res = await db.raw<{ rows: { stored_events: JobEventRow[] }[] }>(
    `with upd as (
       update ${T.jobs}
          set next_sequence = next_sequence + ?${progress !== undefined ? ", progress = greatest(progress, ?)" : ""}
        where id = ?
       returning id, next_sequence
     ),
     ${ev.sql}
     select ${STORED_EVENTS} as stored_events`,
    [events.length, ...(progress !== undefined ? [progress] : []), jobId, ...ev.bindings],
  );
  return res.rows[0]?.stored_events ?? [];
}

/** Replaces the worker state of a job `worker` holds in progress; false when the lease was lost. */
export async function saveJobState(db: Db, jobId: string, worker: string, state: JobRow["state"]): Promise<boolean> {
  const updated = await db(T.jobs)
    .where({ id: jobId, status: "in_progress", lease_owner: worker })
    .update({ state: JSON.stringify(state) });
  return updated > 0;
}

/** Takes a transaction-level advisory lock on `key` (held until `trx` ends). */
export async function lockKey(trx: Knex.Transaction, key: string): Promise<void> {
  await trx.raw("select pg_advisory_xact_lock(hashtext(?))", [key]);
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

/** Jobs awaiting approval for at least `timeoutMs` (their wait began at updated_at), oldest first. */
export async function expiredApprovals(db: Knex, timeoutMs: number): Promise<JobRow[]> {
  return db<JobRow>(T.jobs)
    .where({ status: "awaiting_approval" })
    .andWhere("updated_at", "<=", db.raw("now() - (? * interval '1 millisecond')", [timeoutMs]))
    .orderBy("updated_at")
    .limit(100);
}

/** Deletes terminal jobs completed before `olderThanMs` ago (events go with them); returns the count. */
export async function deleteExpired(db: Knex, olderThanMs: number): Promise<number> {
  return db(T.jobs)
    .whereIn("status", TERMINAL_STATUSES)
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

/** The oldest `limit` job outbox rows not yet published, in id order. */
export function unpublishedLifecycleEvents(db: Db, limit: number): Promise<JobOutboxRow[]> {
  return db<JobOutboxRow>(T.jobOutbox).whereNull("published_at").orderBy("id", "asc").limit(limit);
}

/** Marks job outbox rows published (after JetStream acked them). */
export async function markLifecyclePublished(db: Db, ids: string[]): Promise<void> {
  await db(T.jobOutbox).whereIn("id", ids).update({ published_at: db.fn.now() });
}

/** Deletes job outbox rows published before `olderThanMs` ago; returns the count. */
export function deletePublishedLifecycleEvents(db: Db, olderThanMs: number): Promise<number> {
  return db(T.jobOutbox)
    .where("published_at", "<", db.raw("now() - (? * interval '1 millisecond')", [olderThanMs]))
    .delete();
}
