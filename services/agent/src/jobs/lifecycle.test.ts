// The job status changes of jobs/lifecycle.ts on the real agent schema: each applies only when
// its guard holds, writes the status, lease, metadata and events of the transitions table in one
// statement, and publishes the stored events on the job's NATS subject.
import { randomUUID } from "node:crypto";
import { decodeJobEvent, type JobEvent, jobSubject } from "@redline/event-contracts";
import { agentV1 } from "@redline/grpc-stubs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { AgentContext } from "../context.js";
import { eventsAfter, insertJob } from "../db/store/jobs.js";
import { type JobMetadata, type JobRow, T } from "../db/tables.js";
import { agentTestContext, closeContext } from "../testing.js";
import {
  emit,
  markApprovalExpired,
  markAwaiting,
  markCancelled,
  markCompleted,
  markFailed,
  markHandedBack,
  markRequeued,
  requestCancel,
  updateAwaiting,
} from "./lifecycle.js";

let ctx: AgentContext;

beforeAll(async () => {
  ctx = await agentTestContext("lifecycle");
});
afterAll(() => closeContext(ctx));

const WORKER = "agent-test-w1";

/** A pending job, then patched straight in the table to `fields` (the state a test starts from). */
async function job(fields: Partial<Record<keyof JobRow, unknown>> = {}, metadata: JobMetadata = {}): Promise<JobRow> {
  const ownerId = `own_${randomUUID().slice(0, 8)}`;
  const row = await insertJob(ctx.db, {
    id: randomUUID(),
    owner_id: ownerId,
    user_id: ownerId,
    organization_id: null,
    principal: { userId: ownerId, organizationId: "", ownerId, plan: "free" },
    session_id: `s_${randomUUID().slice(0, 8)}`,
    job_type: "chat",
    request: { message: "hello" },
    metadata: { message: "hello", ...metadata },
    charge_key: `job:${randomUUID()}`,
    state: {},
  });
  if (Object.keys(fields).length > 0) await ctx.db(T.jobs).where({ id: row.id }).update(fields);
  return read(row.id);
}

async function read(id: string): Promise<JobRow> {
  const row = await ctx.db<JobRow>(T.jobs).where({ id }).first();
  if (!row) throw new Error(`job ${id} is gone`);
  return row;
}

const eventTypes = async (id: string) => (await eventsAfter(ctx.db, id, 0)).map((e) => e.type);

/** Collects what is published on the job's subject while `act` runs (and a moment after). */
async function published(jobId: string, act: () => Promise<unknown>): Promise<JobEvent[]> {
  const got: JobEvent[] = [];
  const sub = ctx.nats.subscribe(jobSubject(jobId), { callback: (_err, msg) => got.push(decodeJobEvent(msg.data)) });
  await ctx.nats.flush();
  await act();
  await ctx.nats.flush();
  // The publish is fire-and-forget; one more round trip lets our own subscription see it.
  await new Promise((resolve) => setTimeout(resolve, 50));
  sub.unsubscribe();
  return got;
}

describe("job lifecycle", () => {
  it("cancels a pending job: status, cleared approval metadata and state, one error event, published", async () => {
    const row = await job(
      { state: JSON.stringify({ newSession: true }) },
      {
        awaiting_kind: "changes",
        pending_changes: [],
        feedback: ["keep"],
      },
    );
    const events = await published(row.id, async () => {
      const out = await markCancelled(ctx, row.id, { status: ["pending", "awaiting_approval"] });
      expect(out?.status).toBe("cancelled");
    });
    const after = await read(row.id);
    expect(after.status).toBe("cancelled");
    expect(after.completed_at).toBeInstanceOf(Date);
    expect(after.state).toEqual({});
    expect(after.metadata).toEqual({ message: "hello", feedback: ["keep"] });
    expect(await eventTypes(row.id)).toEqual(["error"]);
    expect(events).toEqual([expect.objectContaining({ sequence: 1, type: "error", data: { error: "Job cancelled" } })]);
    expect(Number(after.next_sequence)).toBe(row.next_sequence + 1);
  });

  it("changes nothing and publishes nothing when the guard does not hold", async () => {
    const done = await job({ status: "completed", completed_at: new Date() });
    const events = await published(done.id, async () => {
      expect(await markCancelled(ctx, done.id, { status: ["pending", "awaiting_approval"] })).toBeNull();
      expect(await markFailed(ctx, done.id, { status: ["in_progress"] }, "boom")).toBeNull();
      expect(await requestCancel(ctx, done.id)).toBeNull();
    });
    expect(events).toEqual([]);
    expect(await read(done.id)).toEqual(done);
    expect(await eventTypes(done.id)).toEqual([]);
    expect(await markCancelled(ctx, randomUUID(), { status: ["pending"] })).toBeNull();
  });

  it("fails a running job only for the worker holding its lease; the lease ends with it", async () => {
    const row = await job({ status: "in_progress", lease_owner: WORKER, attempts: 1 });
    expect(await markFailed(ctx, row.id, { status: ["in_progress"], leaseOwner: "someone-else" }, "x")).toBeNull();
    expect((await read(row.id)).status).toBe("in_progress");
    const failed = await markFailed(ctx, row.id, { status: ["in_progress"], leaseOwner: WORKER }, "The model failed");
    expect(failed).toMatchObject({
      status: "failed",
      error: "The model failed",
      lease_owner: null,
      lease_expires_at: null,
    });
    expect((await eventsAfter(ctx.db, row.id, 0)).map((e) => [e.type, e.data])).toEqual([
      ["error", { error: "The model failed" }],
    ]);
  });

  it("completes with result, state, progress 100 and final then usage events in sequence order", async () => {
    const row = await job({ status: "in_progress", lease_owner: WORKER, progress: 40 });
    await emit(ctx, row.id, [{ type: "intermediate", data: { content: "working" } }], 60);
    const result = agentV1.ChatResponse.fromPartial({
      response: "Done.",
      sessionId: row.session_id,
      usage: { monthlyUsed: 3, monthlyLimit: 50, monthlyRemaining: 47 },
    });
    const events = await published(row.id, () =>
      markCompleted(
        ctx,
        row.id,
        { status: ["in_progress"], leaseOwner: WORKER },
        result,
        { newSession: true },
        {
          feedback: ["done"],
        },
      ),
    );
    const after = await read(row.id);
    expect(after).toMatchObject({ status: "completed", progress: 100, state: { newSession: true }, lease_owner: null });
    expect(agentV1.ChatResponse.fromJSON(after.result).response).toBe("Done.");
    expect(after.metadata.feedback).toEqual(["done"]);
    const stored = await eventsAfter(ctx.db, row.id, 0);
    expect(stored.map((e) => [Number(e.sequence), e.type])).toEqual([
      [1, "intermediate"],
      [2, "final"],
      [3, "usage"],
    ]);
    expect(stored[2]?.data).toEqual({ monthly_used: 3, monthly_limit: 50, monthly_remaining: 47 });
    expect(events.map((e) => [e.sequence, e.type])).toEqual([
      [2, "final"],
      [3, "usage"],
    ]);
  });

  it("emit appends progress events without a status change and never lowers progress", async () => {
    const row = await job({ status: "in_progress", progress: 70 });
    await emit(ctx, row.id, [], 99);
    expect((await read(row.id)).progress).toBe(70);
    await emit(ctx, row.id, [{ type: "intermediate", data: { content: "a" } }], 50);
    await emit(ctx, row.id, [{ type: "intermediate", data: { content: "b" } }], 80);
    const after = await read(row.id);
    expect(after).toMatchObject({ status: "in_progress", progress: 80 });
    expect((await eventsAfter(ctx.db, row.id, 0)).map((e) => e.data.content)).toEqual(["a", "b"]);
  });

  it("pauses for approval only from in_progress under the worker's lease, ending the lease", async () => {
    const row = await job({
      status: "in_progress",
      lease_owner: WORKER,
      lease_expires_at: new Date(Date.now() + 30_000),
    });
    const wait = { progress: 50, metadata: { awaiting_kind: "changes" as const, pending_changes: [] }, state: {} };
    const prompt = [{ type: "approval_required", data: { count: 0 } }];
    expect(await markAwaiting(ctx, row.id, "another-worker", wait, prompt)).toBeNull();
    const awaiting = await markAwaiting(ctx, row.id, WORKER, wait, prompt);
    expect(awaiting).toMatchObject({
      status: "awaiting_approval",
      progress: 50,
      lease_owner: null,
      lease_expires_at: null,
    });
    expect(awaiting?.metadata).toMatchObject({ message: "hello", awaiting_kind: "changes" });
    expect(await eventTypes(row.id)).toEqual(["approval_required"]);
    // A second pause of the same job no longer holds: it is not in_progress now.
    expect(await markAwaiting(ctx, row.id, WORKER, wait, prompt)).toBeNull();

    const kept = await updateAwaiting(ctx, row.id, { feedback: ["less"] }, { newSession: false });
    expect(kept).toMatchObject({ status: "awaiting_approval", state: { newSession: false } });
    expect(kept?.metadata).toMatchObject({ awaiting_kind: "changes", feedback: ["less"] });

    const requeued = await markRequeued(ctx, row.id);
    expect(requeued?.status).toBe("pending");
    expect(requeued?.metadata).toEqual({ message: "hello", pending_changes: [], feedback: ["less"] });
    expect(await markRequeued(ctx, row.id)).toBeNull();
    expect(await updateAwaiting(ctx, row.id, {}, {})).toBeNull();
  });

  it("hands a job back on a graceful stop without counting the attempt, and only the lease holder's", async () => {
    const claimed = await job({ status: "in_progress", lease_owner: WORKER, attempts: 2 });
    expect(await markHandedBack(ctx, claimed, "another-worker")).toBeNull();
    const back = await markHandedBack(ctx, claimed, WORKER);
    expect(back).toMatchObject({ status: "pending", attempts: 1, lease_owner: null, lease_expires_at: null });

    // Handed to the worker at creation and not claimed yet: pending, leased, attempts not raised.
    const handed = await job({ lease_owner: WORKER, lease_expires_at: new Date(Date.now() + 30_000), attempts: 0 });
    const again = await markHandedBack(ctx, handed, WORKER);
    expect(again).toMatchObject({ status: "pending", attempts: 0, lease_owner: null });
  });

  it("flags a running job for cancellation without changing its status or events", async () => {
    const row = await job({ status: "in_progress", lease_owner: WORKER });
    const flagged = await requestCancel(ctx, row.id);
    expect(flagged).toMatchObject({ status: "in_progress", cancel_requested: true, lease_owner: WORKER });
    expect(await eventTypes(row.id)).toEqual([]);
    // A terminal change clears the flag with the lease.
    const cancelled = await markCancelled(ctx, row.id, { status: ["in_progress"], leaseOwner: WORKER });
    expect(cancelled).toMatchObject({ status: "cancelled", cancel_requested: false, lease_owner: null });
    expect(await requestCancel(ctx, (await job()).id)).toBeNull();
  });

  it("expires a wait only once it lasted the timeout: failed, approval state dropped, error event, outbox row", async () => {
    const metadata: JobMetadata = { awaiting_kind: "changes", pending_changes: [] };
    const fresh = await job({ status: "awaiting_approval", updated_at: new Date() }, metadata);
    expect(await markApprovalExpired(ctx, fresh.id, 60_000, "late")).toBeNull();
    expect((await read(fresh.id)).status).toBe("awaiting_approval");
    const running = await job({ status: "in_progress", updated_at: new Date(Date.now() - 120_000) });
    expect(await markApprovalExpired(ctx, running.id, 60_000, "late")).toBeNull();

    const old = await job(
      { status: "awaiting_approval", updated_at: new Date(Date.now() - 120_000), state: JSON.stringify({ a: 1 }) },
      metadata,
    );
    const error =
      "Approval timed out after 60 s: nobody approved or denied the pending changes, so they were discarded";
    const events = await published(old.id, async () => {
      const expired = await markApprovalExpired(ctx, old.id, 60_000, error);
      expect(expired).toMatchObject({ status: "failed", error, state: {} });
      expect(expired?.metadata).not.toHaveProperty("pending_changes");
      expect(expired?.metadata).not.toHaveProperty("awaiting_kind");
      expect(expired?.completed_at).toBeInstanceOf(Date);
    });
    expect(events.map((e) => e.type)).toEqual(["error"]);
    expect((await eventsAfter(ctx.db, old.id, 0)).map((e) => [e.type, e.data])).toEqual([["error", { error }]]);
    const outbox = await ctx.db(T.jobOutbox).where({ job_id: old.id }).select("status", "error");
    expect(outbox).toEqual([{ status: "failed", error }]);
  });

  it("writes one job outbox row with each completed, failed or awaiting change, none for others or a failed guard", async () => {
    const outbox = async (id: string) =>
      (await ctx.db(T.jobOutbox).where({ job_id: id }).orderBy("id")).map(
        (r: { status: string; error: string | null }) => [r.status, r.error],
      );
    const failing = await job({ status: "in_progress", lease_owner: WORKER });
    expect(await markFailed(ctx, failing.id, { status: ["pending"] }, "nope")).toBeNull();
    expect(await outbox(failing.id)).toEqual([]);
    await markFailed(ctx, failing.id, { status: ["in_progress"] }, "Document not found");
    expect(await outbox(failing.id)).toEqual([["failed", "Document not found"]]);

    const waiting = await job({ status: "in_progress", lease_owner: WORKER });
    const wait = { progress: 50, metadata: { awaiting_kind: "changes" as const }, state: {} };
    await markAwaiting(ctx, waiting.id, WORKER, wait, []);
    await markRequeued(ctx, waiting.id);
    expect(await outbox(waiting.id)).toEqual([["awaiting_approval", null]]);

    const cancelled = await job();
    await markCancelled(ctx, cancelled.id, { status: ["pending"] });
    expect(await outbox(cancelled.id)).toEqual([]);
  });
});
