// The job worker pool (ARCHITECTURE "Async chat jobs", Run, Crash and Stop): workers claim jobs
// (or are handed one at its creation), run each under a heartbeat, and record how it ended; a
// sweep fails jobs stranded by dead workers or left awaiting approval too long, and deletes
// expired ones. Agents wake each other over NATS when a job becomes claimable and none of their
// own workers is idle, so a job handed back by a stopping agent is taken at once, not at the
// next poll.
import { DependencyUnavailableError, RemoteError, SpanKind, type TraceContext, withSpan } from "@redline/service-kit";
import type { AgentContext, HandedContext, IdleWorker } from "../context.js";
import { claimJob, deleteExpired, heartbeat, strandedJobs } from "../db/store/jobs.js";
import type { JobRow } from "../db/tables.js";
import { release } from "../turn/ledger.js";
import { jobActor, jobOpts } from "./actor.js";
import { expireApprovals } from "./approval-expiry.js";
import { type Guard, markCancelled, markFailed, markHandedBack } from "./lifecycle.js";
import { failureText, JobAborted, runJob } from "./run-job.js";

/**
 * Core NATS subject on which an agent tells the others that a job became claimable (created or
 * handed back with no idle worker of its own); the data is its instance id. Agent-internal.
 */
const WAKE_SUBJECT = "redline.agent.v1.jobs_runnable";

/** A started pool. */
export interface WorkerPool {
  /**
   * Graceful stop: claims nothing more, interrupts running jobs still in their engine phase and
   * hands them back (pending at once, the attempt not counted, the other agents woken), lets
   * jobs past it finish, and resolves when every worker has let go.
   */
  close(): Promise<void>;
}

/** Starts `ctx.jobsCfg.concurrency` workers and the sweep; installs `ctx.wake` and `ctx.takeIdleWorker`. */
export function startWorkerPool(ctx: AgentContext): WorkerPool {
  const cfg = ctx.jobsCfg;
  let closed = false;
  const stopping = () => closed;
  const idle = idleWorkers(cfg.pollMs, stopping);
  const wakes = listenForWakes(ctx, () => {
    if (!closed) idle.wake();
  });
  ctx.wake = () => {
    if (!idle.wake()) wakes.announce();
  };
  ctx.takeIdleWorker = idle.take;
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
        await execute(ctx, row, worker, stopping);
        continue;
      }
      const handed = await idle.wait(worker);
      if (handed) await execute(ctx, handed.row, worker, stopping, handed.context);
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
      idle.resumeAll();
      const running = [...ctx.running.values()];
      if (running.length > 0) ctx.log.info({ jobs: running.length }, "stopping: handing running jobs back");
      for (const job of running) job.controller.abort("shutdown");
      await Promise.allSettled([...loops, ...running.map((j) => j.done)]);
      wakes.close();
    },
  };
}

/**
 * The wake channel between agents: `announce()` publishes this instance's id on WAKE_SUBJECT;
 * `onWake` runs for each announce of another instance. A NATS failure only delays a pick-up to
 * the next poll.
 */
function listenForWakes(ctx: AgentContext, onWake: () => void): { announce(): void; close(): void } {
  const me = new TextEncoder().encode(ctx.instanceId);
  const decoder = new TextDecoder();
  let sub: ReturnType<AgentContext["nats"]["subscribe"]> | undefined;
  try {
    sub = ctx.nats.subscribe(WAKE_SUBJECT, {
      callback: (err, msg) => {
        if (!err && decoder.decode(msg.data) !== ctx.instanceId) onWake();
      },
    });
  } catch (err) {
    ctx.log.warn({ err }, "cannot hear other agents' wakes; jobs are found by polling");
  }
  return {
    announce() {
      try {
        ctx.nats.publish(WAKE_SUBJECT, me);
      } catch (err) {
        ctx.log.warn({ err }, "waking the other agents failed; they find the job at their next poll");
      }
    },
    close() {
      sub?.unsubscribe();
    },
  };
}

/**
 * The idle workers, oldest first; each waits for a wake (then claims from Postgres), a hand-off
 * (a job created here) or its poll period. One wake claims with one idle worker, not all of
 * them; a wake while every worker is busy is not lost: the next wait returns at once.
 */
function idleWorkers(pollMs: number, closed: () => boolean) {
  const queue: { name: string; resume: (handed?: Handed) => void; hold: () => void }[] = [];
  let woken = false;
  return {
    /** Resumes the oldest idle worker (true), or marks the wake for the next wait (false: none idle). */
    wake(): boolean {
      const next = queue.shift();
      if (next) {
        next.resume();
        return true;
      }
      woken = true;
      return false;
    },
    take(): IdleWorker | null {
      if (closed()) return null;
      const next = queue.shift();
      if (!next) return null;
      // Taken: its poll timer must not send it claiming while the job is being created.
      next.hold();
      return { name: next.name, start: (row, context) => next.resume({ row, context }), release: () => next.resume() };
    },
    wait(name: string): Promise<Handed | undefined> {
      return new Promise((resolve) => {
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
          const at = queue.indexOf(entry);
          if (at >= 0) queue.splice(at, 1);
          resolve(undefined);
        }, pollMs);
        queue.push(entry);
      });
    },
    resumeAll() {
      for (const w of queue.splice(0)) w.resume();
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
 * is leased to `worker` but still pending: runJob claims it while the turn starts. A job that
 * reaches a worker once the pool is stopping is handed back without running.
 */
async function execute(
  ctx: AgentContext,
  row: JobRow,
  worker: string,
  stopping: () => boolean,
  context?: HandedContext,
): Promise<void> {
  const log = jobActor(ctx, row).log;
  // Checked and registered in one synchronous step, so close() either sees it running or it sees close().
  if (stopping()) return handBack(ctx, row, worker, log);
  const cfg = ctx.jobsCfg;
  const controller = new AbortController();
  let letGo: () => void = () => {};
  const done = new Promise<void>((resolve) => {
    letGo = resolve;
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
  try {
    await jobRunSpan(row, worker, async (trace) => {
      const running = ctx.running.get(row.id);
      if (running) running.trace = trace;
      try {
        await runJob(ctx, row, worker, controller.signal, context);
      } catch (err) {
        await recordEnd(ctx, row, worker, err, log);
      }
    });
  } finally {
    clearInterval(beat);
    ctx.running.delete(row.id);
    letGo();
  }
}

/**
 * Runs one attempt of a job in a span that is a CHILD of the creating request's span (the
 * traceparent stored on the row), not a new trace with a link: the job is that request's work
 * finished later, so one trace then shows the chat turn end to end, whichever agent process
 * ran it, and each attempt (a reclaimed job) shows as its own run under the same request.
 */
function jobRunSpan(row: JobRow, worker: string, fn: (trace?: TraceContext) => Promise<void>): Promise<void> {
  return withSpan(
    "job run",
    {
      kind: SpanKind.CONSUMER,
      traceparent: row.traceparent,
      attributes: { "job.id": row.id, "job.type": row.job_type, "job.attempt": row.attempts, "job.worker": worker },
    },
    (_span, trace) => fn(trace),
  );
}

/** Records how a job that threw ended: handed back, left to its new owner, cancelled or failed. */
async function recordEnd(
  ctx: AgentContext,
  row: JobRow,
  worker: string,
  err: unknown,
  log: AgentContext["log"],
): Promise<void> {
  const guard: Guard = { status: ["in_progress"], leaseOwner: worker };
  if (err instanceof JobAborted && err.reason === "shutdown") {
    await handBack(ctx, row, worker, log);
  } else if (err instanceof JobAborted && err.reason === "lease_lost") {
    log.warn("lease lost; another worker owns the job now");
  } else if (err instanceof JobAborted) {
    await cancelAndRelease(ctx, row.id, guard);
  } else if (serviceDown(err) && row.attempts < ctx.jobsCfg.maxAttempts) {
    // A service the turn calls is restarting: the same as a lost worker, so the same cure. The
    // lease lapses (a natural backoff) and a worker runs the job again as a counted attempt, its
    // writes idempotent under the job's keys and its charge still held for whoever finishes it.
    log.warn({ err, attempts: row.attempts }, "a service the job needs is unavailable; it runs again after its lease");
  } else {
    log.warn({ err }, "job failed");
    await release(ctx, jobOpts(ctx, row), row.charge_key, log);
    await markFailed(ctx, row.id, guard, failureText(err));
  }
}

/** True for an internal service that did not answer (or answered 503 because its own dependency is down). */
function serviceDown(err: unknown): boolean {
  return err instanceof DependencyUnavailableError || (err instanceof RemoteError && err.httpStatus === 503);
}

/**
 * A graceful stop gives the job back instead of letting its lease run out: pending at once with
 * this attempt not counted, its charge still held under the job's key (settled once by whoever
 * finishes it), and the other agents woken. A job whose cancel was asked meanwhile is cancelled
 * instead, since no worker claims a pending job flagged for cancellation.
 */
async function handBack(ctx: AgentContext, row: JobRow, worker: string, log: AgentContext["log"]): Promise<void> {
  try {
    const back = await markHandedBack(ctx, row, worker);
    if (!back) {
      log.info("not handed back: the job ended or another worker owns it");
    } else if (back.cancel_requested) {
      await cancelAndRelease(ctx, row.id, { status: ["pending"] });
    } else {
      log.info({ attempts: back.attempts }, "job handed back to the other agents");
      ctx.wake();
    }
  } catch (err) {
    log.warn({ err }, "handing the job back failed; another agent takes it when its lease expires");
  }
}

/** Marks a job cancelled (staged changes dropped) and releases its held operation. */
async function cancelAndRelease(ctx: AgentContext, jobId: string, guard: Guard): Promise<JobRow | null> {
  const row = await markCancelled(ctx, jobId, guard);
  if (row) await release(ctx, jobOpts(ctx, row), row.charge_key, ctx.log.child({ jobId }));
  return row;
}

/**
 * One sweep: fail or cancel jobs stranded by dead workers; fail jobs whose approval wait ran out
 * (approval-expiry.ts); delete expired terminal jobs.
 */
async function sweepOnce(ctx: AgentContext): Promise<void> {
  const cfg = ctx.jobsCfg;
  for (const row of await strandedJobs(ctx.db, cfg.maxAttempts)) {
    const guard: Guard = { status: ["in_progress"], leaseOwner: row.lease_owner ?? "" };
    if (row.cancel_requested) {
      await cancelAndRelease(ctx, row.id, guard);
      continue;
    }
    const error = `The job stopped: the worker running it was lost ${row.attempts} time${row.attempts === 1 ? "" : "s"} (attempt limit ${cfg.maxAttempts}). Please retry.`;
    const failed = await markFailed(ctx, row.id, guard, error);
    if (failed) await release(ctx, jobOpts(ctx, failed), failed.charge_key, ctx.log.child({ jobId: row.id }));
  }
  await expireApprovals(ctx);
  const deleted = await deleteExpired(ctx.db, cfg.retentionMs);
  if (deleted > 0) ctx.log.info({ deleted }, "expired jobs deleted");
}
