// The job queue's metrics: depth and oldest runnable job computed on scrape (one indexed query per
// scrape, nothing per job), and job outcomes counted as each terminal status is written.
import { backlogGaugesOnScrape, counter, type Knex, METRICS_PREFIX } from "@redline/service-kit";
import { T } from "../db/tables.js";

/** The statuses a job ends in: the only values of redline_jobs_completed_total{status}. */
const TERMINAL = new Set(["completed", "failed", "cancelled"]);

const outcomes = counter(
  `${METRICS_PREFIX}jobs_completed_total`,
  "Async chat jobs that ended, by final status (completed, failed, cancelled).",
  ["status"],
);

/** Counts a job reaching `status` in redline_jobs_completed_total when it is a terminal one. */
export function countJobOutcome(status: string | undefined): void {
  if (status !== undefined && TERMINAL.has(status)) outcomes.inc({ status });
}

/**
 * Reports, on scrape, redline_jobs_queue_depth (jobs a worker could claim now: the claim query's
 * predicate, so a growing value means workers fall behind) and
 * redline_jobs_oldest_runnable_age_seconds (0 when none). Returns the function that stops it.
 */
export function observeJobQueue(db: Knex): () => void {
  return backlogGaugesOnScrape(
    async () =>
      (
        await db.raw<{ rows: { count: number; age: number | null }[] }>(
          `select count(*)::int as count, extract(epoch from now() - min(created_at))::float8 as age
             from ${T.jobs}
            where not cancel_requested
              and ((status = 'pending' and (lease_expires_at is null or lease_expires_at < now()))
                   or (status = 'in_progress' and lease_expires_at < now()))`,
        )
      ).rows[0] ?? { count: 0, age: null },
    {
      name: `${METRICS_PREFIX}jobs_queue_depth`,
      help: "Async jobs waiting for a worker (pending, or in progress with a lapsed lease).",
    },
    {
      name: `${METRICS_PREFIX}jobs_oldest_runnable_age_seconds`,
      help: "Age of the oldest job waiting for a worker; 0 when none waits.",
    },
  );
}
