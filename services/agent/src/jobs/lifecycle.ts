// Every change of a job's status, each written once (ARCHITECTURE "Async chat jobs", the job
// status transitions table). Each is one guarded statement of db/store/jobs.ts that also appends
// its events; the events go to NATS after it committed.
import { agentV1 } from "@redline/grpc-stubs";
import type { AgentContext } from "../context.js";
import { appendEvents, type Guard, type JobPatch, type NewEvent, updateJob } from "../db/store/jobs.js";
import type { JobMetadata, JobRow, JobState } from "../db/tables.js";
import { finalEvent, publishEvents, usageEvent } from "./events.js";
import { countJobOutcome } from "./metrics.js";

export type { Guard } from "../db/store/jobs.js";

/** Applies `patch` and `events` when `guard` holds, publishes the events; null when it did not hold. */
async function change(
  ctx: AgentContext,
  jobId: string,
  guard: Guard,
  patch: JobPatch,
  events: NewEvent[] = [],
): Promise<JobRow | null> {
  const out = await updateJob(ctx.db, jobId, guard, patch, events);
  if (!out) return null;
  countJobOutcome(patch.status);
  publishEvents(ctx, out.stored, out.updated.traceparent);
  return out.updated;
}

/** Appends events without a status change (progress text), raising progress to `progress`. */
export async function emit(ctx: AgentContext, jobId: string, events: NewEvent[], progress?: number): Promise<void> {
  if (events.length === 0) return;
  publishEvents(ctx, await appendEvents(ctx.db, jobId, events, progress));
}

/** → cancelled: staged changes and the awaiting prompt are dropped; `error` event. */
export function markCancelled(ctx: AgentContext, jobId: string, guard: Guard): Promise<JobRow | null> {
  const metadata = { pending_changes: undefined, awaiting_kind: undefined };
  return change(ctx, jobId, guard, { status: "cancelled", metadata, state: {} }, [
    { type: "error", data: { error: "Job cancelled" } },
  ]);
}

/** → failed with a user-facing `error`; `error` event. */
export function markFailed(ctx: AgentContext, jobId: string, guard: Guard, error: string): Promise<JobRow | null> {
  return change(ctx, jobId, guard, { status: "failed", error }, [{ type: "error", data: { error } }]);
}

/**
 * awaiting_approval → failed when nobody decided within `timeoutMs` of the wait's start: staged
 * changes and the awaiting prompt are dropped, `error` names the wait; `error` event.
 */
export function markApprovalExpired(
  ctx: AgentContext,
  jobId: string,
  timeoutMs: number,
  error: string,
): Promise<JobRow | null> {
  const metadata = { pending_changes: undefined, awaiting_kind: undefined };
  const guard: Guard = { status: ["awaiting_approval"], inStatusForMs: timeoutMs };
  return change(ctx, jobId, guard, { status: "failed", error, metadata, state: {} }, [
    { type: "error", data: { error } },
  ]);
}

/** → completed with `result` and `state` (and a metadata merge); `final` then `usage`. */
export function markCompleted(
  ctx: AgentContext,
  jobId: string,
  guard: Guard,
  result: agentV1.ChatResponse,
  state: JobState,
  metadata?: Partial<JobMetadata>,
): Promise<JobRow | null> {
  const patch: JobPatch = { status: "completed", progress: 100, result: agentV1.ChatResponse.toJSON(result), state };
  return change(ctx, jobId, guard, metadata ? { ...patch, metadata } : patch, [
    { type: "final", data: finalEvent(result) },
    { type: "usage", data: usageEvent(result.usage) },
  ]);
}

/** in_progress → awaiting_approval (changes to decide, or a continue prompt); the lease ends. */
export function markAwaiting(
  ctx: AgentContext,
  jobId: string,
  worker: string,
  wait: { progress: number; metadata: Partial<JobMetadata>; state: JobState },
  events: NewEvent[],
): Promise<JobRow | null> {
  const guard: Guard = { status: ["in_progress"], leaseOwner: worker };
  const patch = { status: "awaiting_approval" as const, lease_owner: null, lease_expires_at: null, ...wait };
  return change(ctx, jobId, guard, patch, events);
}

/** awaiting_approval → pending (continue: true): any worker goes on from the committed edits. */
export function markRequeued(ctx: AgentContext, jobId: string): Promise<JobRow | null> {
  return change(
    ctx,
    jobId,
    { status: ["awaiting_approval"] },
    { status: "pending", metadata: { awaiting_kind: undefined } },
  );
}

/**
 * in_progress → pending on a graceful stop: the job is handed back at once, this attempt not
 * counted (`row` as the worker got it: claimed, or handed at creation and maybe not claimed yet,
 * which is pending with the worker's lease and attempts not yet raised).
 */
export function markHandedBack(ctx: AgentContext, row: JobRow, worker: string): Promise<JobRow | null> {
  const guard: Guard = { status: ["in_progress", "pending"], leaseOwner: worker };
  const attempts = Math.max(0, row.attempts - (row.status === "in_progress" ? 1 : 0));
  return change(ctx, row.id, guard, { status: "pending", lease_owner: null, lease_expires_at: null, attempts });
}

/** Flags an in_progress job for cancellation; its worker's heartbeat notices. */
export function requestCancel(ctx: AgentContext, jobId: string): Promise<JobRow | null> {
  return change(ctx, jobId, { status: ["in_progress"] }, { cancel_requested: true });
}

/** Keeps a job awaiting approval with what is still pending (no status change). */
export function updateAwaiting(
  ctx: AgentContext,
  jobId: string,
  metadata: Partial<JobMetadata>,
  state: JobState,
): Promise<JobRow | null> {
  return change(ctx, jobId, { status: ["awaiting_approval"] }, { metadata, state });
}
