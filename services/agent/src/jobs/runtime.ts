// What the job commands and the worker pool share: the agent's context plus the jobs database,
// NATS, the pool's config, this instance's id and the jobs it runs right now.
import { encodeJobEvent, type JobEvent, jobSubject } from "@redline/event-contracts";
import type { sessionsCheckpointsV1, sessionsV1 } from "@redline/grpc-stubs";
import type { Knex, NatsConnection, RpcClient } from "@redline/service-kit";
import type { AgentContext, JobsConfig } from "../context.js";
import type { JobEventRow, JobRow } from "../tables.js";

/** A job this instance is running: abort it to cancel; `done` settles when the worker let go. */
export interface RunningJob {
  controller: AbortController;
  done: Promise<void>;
}

/** The agent context of the job commands and the worker pool. */
export interface JobsContext extends AgentContext {
  db: Knex;
  nats: NatsConnection;
  jobsCfg: JobsConfig;
  /** Unique per process: the lease owner prefix of its workers. */
  instanceId: string;
  /** Jobs running on this instance, by id. */
  running: Map<string, RunningJob>;
  /** Wakes an idle worker (a job was created or released here). */
  wake(): void;
  /**
   * Takes an idle worker of this instance for a job about to be created, or null when every
   * worker is busy (or there is no pool). The job is inserted leased to it, so no other worker
   * claims it, and started with the turn context its creation read: no claim round trip and no
   * second session read before the engine starts.
   */
  takeIdleWorker(): IdleWorker | null;
  /** The sessions service's revert side (revert and redo-revert). */
  checkpoints: RpcClient<typeof sessionsCheckpointsV1.SessionCheckpointsServiceService>;
}

/** What a job's creation read for its turn (sessions.v1 GetTurnContext). */
export type HandedContext = sessionsV1.GetTurnContextResponse;

/** An idle worker taken for a job being created. */
export interface IdleWorker {
  /** Its lease owner name. */
  name: string;
  /** Starts the inserted job (leased to `name`, still pending) on it. */
  start(row: JobRow, context: HandedContext): void;
  /** Gives it back: the job was not created. */
  release(): void;
}

/** The wire form of an event, on NATS and in GetJobEvents. */
export type WireEvent = JobEvent;

/** Publishes stored events to NATS; a lost message is recovered by the reader's replay. */
export function publishEvents(ctx: JobsContext, rows: JobEventRow[]): void {
  for (const r of rows) {
    const wire: WireEvent = {
      sequence: Number(r.sequence),
      type: r.type,
      data: r.data,
      created_at: new Date(r.created_at).toISOString(),
    };
    try {
      ctx.nats.publish(jobSubject(r.job_id), encodeJobEvent(wire));
    } catch (err) {
      ctx.log.warn({ err, jobId: r.job_id }, "publishing a job event failed; readers replay it from Postgres");
    }
  }
}
