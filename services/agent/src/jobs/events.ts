// A job's events on the wire: stored rows published on NATS (subject redline.jobs.v1.<job_id>),
// and the data of the final and usage events (ARCHITECTURE "Async chat jobs", Events).
import { encodeJobEvent, type JobEvent, jobSubject } from "@redline/event-contracts";
import { agentV1, type billingV1 } from "@redline/grpc-stubs";
import type { AgentContext } from "../context.js";
import type { JobEventRow } from "../db/tables.js";

/** Publishes stored events to NATS; a lost message is recovered by the reader's replay. */
export function publishEvents(ctx: AgentContext, rows: JobEventRow[]): void {
  for (const r of rows) {
    const wire: JobEvent = {
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

/**
 * The final event's data: the result in proto JSON, so a stream sends `{result}` without reading
 * the job again (the gateway maps it to the spec's JSON).
 */
export function finalEvent(result: agentV1.ChatResponse): Record<string, unknown> {
  return { result: agentV1.ChatResponse.toJSON(result) };
}

/** The usage event's data (unshown-parts.md: monthly_used, monthly_limit, monthly_remaining). */
export function usageEvent(usage: billingV1.Usage | undefined): Record<string, unknown> {
  return {
    monthly_used: usage?.monthlyUsed ?? 0,
    monthly_limit: usage?.monthlyLimit ?? 0,
    monthly_remaining: usage?.monthlyRemaining ?? 0,
  };
}
