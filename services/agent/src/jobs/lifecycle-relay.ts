// Publishes the job outbox (lifecycle events written by the status change's own statement) to
// JetStream. Postgres is the record: a row is marked published only after JetStream acked it, and
// its message id is derived from the row, so a relay that dies between publish and mark publishes
// again without duplicating the event (the stream's duplicate window). Several agents may relay at
// once; the message id makes that harmless too.
import {
  JOB_LIFECYCLE_EVENTS,
  JOB_LIFECYCLE_STREAM,
  JOB_LIFECYCLE_SUBJECTS,
  type JobLifecycleEvent,
  jobLifecycleMessageId,
  jobLifecycleSubject,
} from "@redline/event-contracts";
import { ensureStream, type Logger, publishJson, startPeriodic } from "@redline/service-kit";
import type { AgentContext } from "../context.js";
import {
  deletePublishedLifecycleEvents,
  markLifecyclePublished,
  unpublishedLifecycleEvents,
} from "../db/store/jobs.js";
import type { JobOutboxRow } from "../db/tables.js";

const BATCH = 200;
/** Published rows are kept this long (ms) for inspection, then deleted by the relay. */
const PUBLISHED_RETENTION_MS = 24 * 3600_000;
/** Default period of the relay (ms): a lifecycle event reaches JetStream within about this. */
export const LIFECYCLE_RELAY_MS_DEFAULT = 250;

/** The event a row publishes. */
function lifecycleEvent(row: JobOutboxRow): JobLifecycleEvent {
  return {
    id: Number(row.id),
    type: JOB_LIFECYCLE_EVENTS[row.status as keyof typeof JOB_LIFECYCLE_EVENTS],
    owner_id: row.owner_id,
    job_id: row.job_id,
    session_id: row.session_id,
    status: row.status,
    error: row.error,
    created_at: new Date(row.created_at).toISOString(),
  };
}

/** One pass: publishes up to BATCH unpublished rows in id order, then marks them; returns the count. */
async function relayOnce(ctx: AgentContext): Promise<number> {
  const rows = await unpublishedLifecycleEvents(ctx.db, BATCH);
  const js = ctx.nats.jetstream();
  for (const row of rows)
    await publishJson(
      js,
      jobLifecycleSubject(row.status, row.owner_id),
      jobLifecycleMessageId(row),
      lifecycleEvent(row),
    );
  if (rows.length > 0)
    await markLifecyclePublished(
      ctx.db,
      rows.map((r) => r.id),
    );
  return rows.length;
}

/**
 * Ensures the lifecycle stream and starts the relay every `periodMs` ms (a failing pass, NATS or
 * Postgres down, is retried on the next tick). Returns the function that stops it.
 */
export async function startLifecycleRelay(
  ctx: AgentContext,
  log: Logger,
  periodMs = LIFECYCLE_RELAY_MS_DEFAULT,
): Promise<() => Promise<void>> {
  await ensureStream(ctx.nats, JOB_LIFECYCLE_STREAM, JOB_LIFECYCLE_SUBJECTS);
  let passes = 0;
  const periodic = startPeriodic("job lifecycle relay", periodMs, log, async () => {
    while ((await relayOnce(ctx)) === BATCH) {}
    // Pruning once in a while is enough: the rows are small and indexed by the unpublished predicate.
    if (++passes % 1000 === 1) await deletePublishedLifecycleEvents(ctx.db, PUBLISHED_RETENTION_MS);
  });
  return () => periodic.stop();
}
