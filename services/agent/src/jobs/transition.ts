// Status changes of a job: one transaction locks the row, checks the expected state, applies the
// change and appends its events; the events go to NATS after commit.
import type { JobEventRow, JobRow, JobStatus } from "../tables.js";
import { TERMINAL_STATUSES } from "../tables.js";
import { type JobsContext, publishEvents } from "./runtime.js";
import { appendEvents, type NewEvent, T } from "./store.js";

/** What the row must look like for the change to apply. */
export interface Guard {
  status?: JobStatus[];
  /** The lease owner (a worker finishing its own job). */
  leaseOwner?: string;
}

/** Fields a transition may set. */
export type JobPatch = Partial<
  Pick<
    JobRow,
    | "status"
    | "progress"
    | "result"
    | "error"
    | "metadata"
    | "state"
    | "cancel_requested"
    | "lease_owner"
    | "lease_expires_at"
    | "attempts"
  >
>;

/**
 * Applies `patch` and appends `events` when the guard holds; returns the new row, or null when
 * the job is gone or the guard failed (another worker or a cancel got there first). updated_at
 * moves on every status change; completed_at is set on entering a terminal status.
 */
export async function transition(
  ctx: JobsContext,
  jobId: string,
  guard: Guard,
  patch: JobPatch | ((row: JobRow) => JobPatch),
  events: NewEvent[] | ((row: JobRow) => NewEvent[]) = [],
): Promise<JobRow | null> {
  if (typeof patch !== "function" && typeof events !== "function" && changesStatus(guard, patch)) {
    const out = await transitionStatement(ctx, jobId, guard, patch, events);
    if (out) publishEvents(ctx, out.stored);
    return out?.updated ?? null;
  }
  const out = await ctx.db.transaction(async (trx) => {
    const row = await trx<JobRow>(T.jobs).where({ id: jobId }).forUpdate().first();
    if (!row) return null;
    if (guard.status && !guard.status.includes(row.status)) return null;
    if (guard.leaseOwner !== undefined && row.lease_owner !== guard.leaseOwner) return null;
    const p = typeof patch === "function" ? patch(row) : patch;
    const update: Record<string, unknown> = { ...p };
    for (const k of ["result", "metadata", "state"] as const) {
      if (k in p) update[k] = p[k] === null ? null : JSON.stringify(p[k]);
    }
    if (p.status && p.status !== row.status) {
      update.updated_at = trx.fn.now();
      if (TERMINAL_STATUSES.includes(p.status)) {
        update.completed_at = trx.fn.now();
        update.lease_owner = null;
        update.lease_expires_at = null;
        update.cancel_requested = false;
      }
    }
    const [updated] = await trx<JobRow>(T.jobs).where({ id: jobId }).update(update).returning("*");
    const stored = await appendEvents(trx, jobId, typeof events === "function" ? events(row) : events);
    return { updated, stored };
  });
  if (!out) return null;
  publishEvents(ctx, out.stored);
  return out.updated;
}

/** True when the guard admits only statuses other than the patch's: the status surely changes. */
function changesStatus(guard: Guard, patch: JobPatch): patch is JobPatch & { status: JobStatus } {
  return patch.status !== undefined && (guard.status?.length ?? 0) > 0 && !guard.status?.includes(patch.status);
}

/**
 * The insert of `events` as a CTE after the CTE `upd` (which returns the job's id and its
 * next_sequence already advanced by the count), with its bindings.
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

/**
 * A status change as one statement (no transaction round trips): the guarded update, the
 * sequence advance and the events' insert; null when the guard failed. The hot path of every
 * job (claim → completed) goes through here.
 */
async function transitionStatement(
  ctx: JobsContext,
  jobId: string,
  guard: Guard,
  patch: JobPatch & { status: JobStatus },
  events: NewEvent[],
): Promise<{ updated: JobRow; stored: JobEventRow[] } | null> {
  const fields: Record<string, unknown> = { ...patch };
  const terminal = TERMINAL_STATUSES.includes(patch.status);
  if (terminal) {
    for (const k of ["lease_owner", "lease_expires_at", "cancel_requested"]) delete fields[k];
  }
  const sets: string[] = [];
  const bindings: unknown[] = [];
  for (const [column, value] of Object.entries(fields)) {
    if (value === undefined) continue;
    sets.push(`"${column}" = ?`);
    bindings.push(JSON_COLUMNS.has(column) && value !== null ? JSON.stringify(value) : value);
  }
  sets.push("updated_at = now()");
  if (terminal)
    sets.push("completed_at = now()", "lease_owner = null", "lease_expires_at = null", "cancel_requested = false");
  if (events.length > 0) {
    sets.push("next_sequence = next_sequence + ?");
    bindings.push(events.length);
  }
  const where = ["id = ?", `status in (${(guard.status ?? []).map(() => "?").join(", ")})`];
  bindings.push(jobId, ...(guard.status ?? []));
  if (guard.leaseOwner !== undefined) {
    where.push("lease_owner = ?");
    bindings.push(guard.leaseOwner);
  }
  const ev = eventsCte(events);
  const res = await ctx.db.raw<{ rows: (JobRow & { stored_events: JobEventRow[] })[] }>(
    `with upd as (update ${T.jobs} set ${sets.join(", ")} where ${where.join(" and ")} returning *),
     ${ev.sql}
     select upd.*, coalesce((select json_agg(ev order by ev.sequence) from ev), '[]'::json) as stored_events from upd`,
    [...bindings, ...ev.bindings],
  );
  const row = res.rows[0];
  if (!row) return null;
  const { stored_events, ...updated } = row;
  return { updated: updated as JobRow, stored: stored_events };
}

const JSON_COLUMNS = new Set(["result", "metadata", "state"]);

/** Appends events without a status change (progress text), in one statement. */
export async function emit(ctx: JobsContext, jobId: string, events: NewEvent[], progress?: number): Promise<void> {
  if (events.length === 0) return;
  const ev = eventsCte(events);
  const res = await ctx.db.raw<{ rows: { stored_events: JobEventRow[] }[] }>(
    `with upd as (
       update ${T.jobs}
          set next_sequence = next_sequence + ?${progress !== undefined ? ", progress = greatest(progress, ?)" : ""}
        where id = ?
       returning id, next_sequence
     ),
     ${ev.sql}
     select coalesce((select json_agg(ev order by ev.sequence) from ev), '[]'::json) as stored_events`,
    [events.length, ...(progress !== undefined ? [progress] : []), jobId, ...ev.bindings],
  );
  publishEvents(ctx, res.rows[0]?.stored_events ?? []);
}
