// A job's events on the wire: stored rows published on NATS (subject redline.jobs.v1.<job_id>),
// and the data of the final and usage events (ARCHITECTURE "Async chat jobs", Events).
import { encodeJobEvent, type JobEvent, jobSubject } from "@redline/event-contracts";
import { agentV1, type billingV1 } from "@redline/grpc-stubs";
import { natsTraceHeaders, natsTraceparentHeaders } from "@redline/service-kit";
import type { AgentContext } from "../context.js";
import type { NewEvent } from "../db/store/jobs.js";
import type { JobEventRow, StagedChange } from "../db/tables.js";

/**
 * Publishes stored events to NATS; a lost message is recovered by the reader's replay. Events of
 * a job running here carry its run's traceparent, others (a cancel of a queued job, say) the
 * job's stored `traceparent`, so a reader continues the job's trace either way.
 */
export function publishEvents(ctx: AgentContext, rows: JobEventRow[], traceparent?: string | null): void {
  for (const r of rows) {
    const wire: JobEvent = {
      sequence: Number(r.sequence),
      type: r.type,
      data: r.data,
      created_at: new Date(r.created_at).toISOString(),
    };
    try {
      const run = ctx.running.get(r.job_id)?.trace;
      const headers = run ? natsTraceHeaders(run) : natsTraceparentHeaders(traceparent);
      ctx.nats.publish(jobSubject(r.job_id), encodeJobEvent(wire), { headers });
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

/** The document_sync event's data: `{type, content}` with `content` the HTML with chunk ids. */
export function documentSyncEvent(html: string): NewEvent {
  return { type: "document_sync", data: { type: "document_sync", content: html } };
}

/** A progress event's data: `{type: "intermediate", content, timestamp}` (timestamp ISO 8601). */
export function intermediateEvent(text: string, type = "intermediate"): NewEvent {
  return { type: "intermediate", data: { type, content: text, timestamp: new Date().toISOString() } };
}

/**
 * A staged change as the wire's change record, the same fields as REST's pending_changes:
 * change_id, operation, chunk_id, document_id, old_html, new_html, ai_explanation, batch_id,
 * batch_total, and insert_after_chunk_id only for an insert that has an anchor (unshown-parts.md:
 * `insert_after_chunk_id?`; string fields are left out rather than empty or null).
 */
function changeRecordWire(c: StagedChange): Record<string, unknown> {
  const { insert_after_chunk_id, ...rest } = c;
  return { ...rest, ...(c.operation === "create" && insert_after_chunk_id && { insert_after_chunk_id }) };
}

/**
 * The events of a staged turn (unshown-parts.md, Progress stream, wire envelope): one
 * `proposed_change` per change with `content` = the JSON-encoded change record, then one
 * `proposed_change_batch` with `content` = the JSON-encoded `{batch_id, batch_total, changes}`.
 * The record's (batch's) fields are repeated at the top level for readers that look there.
 */
export function proposedChangeEvents(records: StagedChange[]): NewEvent[] {
  const changes = records.map(changeRecordWire);
  const batch = { batch_id: records[0]?.batch_id ?? "", batch_total: records.length, changes };
  return [
    ...changes.map((c) => ({
      type: "proposed_change",
      data: { ...c, type: "proposed_change", content: JSON.stringify(c) },
    })),
    {
      type: "proposed_change_batch",
      data: { ...batch, type: "proposed_change_batch", content: JSON.stringify(batch) },
    },
  ];
}
