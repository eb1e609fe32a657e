import type { JobRow } from "../tables.js";
import { failureText, JobAborted, jobActor, runJob } from "./run-job.js";
import type { HandedContext, JobsContext } from "./runtime.js";
import { claimJob, deleteExpired, heartbeat, strandedJobs } from "./store.js";
import { transition } from "./transition.js";

/** A started pool. */
export interface WorkerPool {
  /** Stops claiming, aborts nothing: running jobs keep their lease until it expires (another instance resumes them). */
  close(): Promise<void>;
}

/** Starts `ctx.jobsCfg.concurrency` workers and the sweep. */
export function startWorkerPool(ctx: JobsContext): WorkerPool {
  const cfg = ctx.jobsCfg;
  let closed = false;
  // Idle workers, oldest first; each waits for a wake (claim from Postgres) or a hand-off.
  const idleWorkers: { name: string; resume: (handed?: Handed) => void; hold: () => void }[] = [];
  // One wake (one new job) claims with one idle worker, not all of them. A wake while every
  // worker is busy must not be lost: the next idle returns at once.
  let woken = false;
  ctx.wake = () => {
    const next = idleWorkers.shift();
    if (next) next.resume();
    else woken = true;
  };
  ctx.takeIdleWorker = () => {
    if (closed) return null;
    const next = idleWorkers.shift();
    if (!next) return null;
    // Taken: its poll timer must not send it claiming while the job is being created.
    next.hold();
    return {
      name: next.name,
      start: (row, context) => next.resume({ row, context }),
      release: () => next.resume(),
    };
  };
  const idle = (name: string) =>
    new Promise<Handed | undefined>((resolve) => {
      if (woken) {
        woken = false;
        resolve(undefined);
        return;
      }
      const entry = {
        name,
        resume: (handed?: Handed) => {
          clearTimeout(timer);
          resolve(handed);
        },
        hold: () => clearTimeout(timer),
      };
      // A poll that times out leaves the queue, so a later wake reaches a worker still idle.
      const timer = setTimeout(() => {
        const at = idleWorkers.indexOf(entry);
        if (at >= 0) idleWorkers.splice(at, 1);
        resolve(undefined);
      }, cfg.pollMs);
      idleWorkers.push(entry);
    });

  const loop = async (index: number) => {
    const worker = `${ctx.instanceId}/${index}`;
    while (!closed) {
      let row: JobRow | null = null;
      try {
        row = await claimJob(ctx.db, worker, cfg.leaseMs, cfg.maxAttempts);
      } catch (err) {
        if (!closed) ctx.log.warn({ err }, "claiming a job failed");
      }
      if (row) {
        await execute(ctx, row, worker, () => closed);
        continue;
      }
      const handed = await idle(worker);
      if (handed) await execute(ctx, handed.row, worker, () => closed, handed.context);
    }
  };
  const loops = Array.from({ length: cfg.concurrency }, (_, i) => loop(i));

  const sweep = async () => {
    try {
      await sweepOnce(ctx);
    } catch (err) {
      if (!closed) ctx.log.warn({ err }, "job sweep failed");
    }
  };
  const sweepTimer = setInterval(sweep, cfg.sweepMs);
  void sweep();

  return {
    async close() {
      closed = true;
      clearInterval(sweepTimer);
      for (const w of idleWorkers.splice(0)) w.resume();
      // Running jobs are abandoned with their lease: a kill and a shutdown look alike to the others.
      for (const job of ctx.running.values()) job.controller.abort("lease_lost");
      await Promise.allSettled([...loops, ...[...ctx.running.values()].map((j) => j.done)]);
    },
  };
}

/** A job handed to an idle worker at its creation, with the turn context read then. */
interface Handed {
  row: JobRow;
  context: HandedContext;
}

/**
 * Runs one claimed job with its heartbeat, then records how it ended. A handed job (`context`)
 * is leased to `worker` but still pending: runJob claims it while the turn starts.
 */
async function execute(
  ctx: JobsContext,
  row: JobRow,
  worker: string,
  shuttingDown: () => boolean,
  context?: HandedContext,
): Promise<void> {
  const cfg = ctx.jobsCfg;
  const controller = new AbortController();
  let release: () => void = () => {};
  const done = new Promise<void>((resolve) => {
    release = resolve;
  });
  ctx.running.set(row.id, { controller, done });
  const beat = setInterval(async () => {
    try {
      const cancel = await heartbeat(ctx.db, row.id, worker, cfg.leaseMs);
      if (cancel === null) controller.abort("lease_lost");
      else if (cancel) controller.abort("cancelled");
    } catch (err) {
      ctx.log.warn({ err, jobId: row.id }, "job heartbeat failed");
    }
  }, cfg.heartbeatMs);
  const log = jobActor(ctx, row).log;
  try {
    await runJob(ctx, row, worker, controller.signal, context);
  } catch (err) {
    if (err instanceof JobAborted && err.reason === "lease_lost" && shuttingDown()) {
      // A graceful stop hands the job back at once instead of letting its lease run out.
      await transition(
        ctx,
        row.id,
        { status: ["in_progress"], leaseOwner: worker },
        { status: "pending", lease_owner: null, lease_expires_at: null, attempts: Math.max(0, row.attempts - 1) },
      ).catch((e) => log.warn({ err: e }, "handing the job back failed; its lease will expire"));
    } else if (err instanceof JobAborted && err.reason === "lease_lost") {
      log.warn("lease lost; another worker owns the job now");
    } else if (err instanceof JobAborted) {
      await finishCancelled(ctx, row.id, { status: ["in_progress"], leaseOwner: worker });
    } else {
      log.warn({ err }, "job failed");
      await releaseCharge(ctx, row);
      await transition(
        ctx,
        row.id,
        { status: ["in_progress"], leaseOwner: worker },
        { status: "failed", error: failureText(err) },
        [{ type: "error", data: { error: failureText(err) } }],
      );
    }
  } finally {
    clearInterval(beat);
    ctx.running.delete(row.id);
    release();
  }
}

/** Releases the job's held operation (settle 0; a no-op once settled). */
export async function releaseCharge(ctx: JobsContext, row: JobRow, operations = 0): Promise<void> {
  await ctx.billing
    .settleOperations({ chargeKey: row.charge_key, operations }, { principal: row.principal, requestId: row.id })
    .catch((err) => ctx.log.error({ err, jobId: row.id }, "settling the job's charge failed"));
}

/** Marks a job cancelled (staged changes dropped) and releases its charge. */
export async function finishCancelled(
  ctx: JobsContext,
  jobId: string,
  guard: Parameters<typeof transition>[2],
): Promise<JobRow | null> {
  const row = await transition(
    ctx,
    jobId,
    guard,
    (current) => ({
      status: "cancelled",
      metadata: { ...current.metadata, pending_changes: undefined, awaiting_kind: undefined },
      state: {},
    }),
    [{ type: "error", data: { error: "Job cancelled" } }],
  );
  if (row) await releaseCharge(ctx, row);
  return row;
}

/** One sweep: fail or cancel jobs stranded by dead workers; delete expired terminal jobs. */
export async function sweepOnce(ctx: JobsContext): Promise<void> {
  const cfg = ctx.jobsCfg;
  for (const row of await strandedJobs(ctx.db, cfg.maxAttempts)) {
    const guard = { status: ["in_progress" as const], leaseOwner: row.lease_owner ?? "" };
    if (row.cancel_requested) {
      await finishCancelled(ctx, row.id, guard);
      continue;
    }
    const error = `The job stopped: the worker running it was lost ${row.attempts} time${row.attempts === 1 ? "" : "s"} (attempt limit ${cfg.maxAttempts}). Please retry.`;
    const failed = await transition(ctx, row.id, guard, { status: "failed", error }, [
      { type: "error", data: { error } },
    ]);
    if (failed) await releaseCharge(ctx, failed);
  }
  const deleted = await deleteExpired(ctx.db, cfg.retentionMs);
  if (deleted > 0) ctx.log.info({ deleted }, "expired jobs deleted");
}
