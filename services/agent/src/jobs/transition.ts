// Status changes of a job: one transaction locks the row, checks the expected state, applies the
// change and appends its events; the events go to NATS after commit.
import type { JobRow, JobStatus } from "../tables.js";
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

/** Appends events without a status change (progress text). */
export async function emit(ctx: JobsContext, jobId: string, events: NewEvent[], progress?: number): Promise<void> {
  const stored = await ctx.db.transaction(async (trx) => {
    if (progress !== undefined) {
      await trx(T.jobs).where({ id: jobId }).andWhere("progress", "<", progress).update({ progress });
    }
    return appendEvents(trx, jobId, events);
  });
  publishEvents(ctx, stored);
}
