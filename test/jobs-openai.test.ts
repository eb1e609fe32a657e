// Async chat jobs with the scripted OpenAI-compatible model (slow streams, tool-call rounds):
// cancel while pending and while running, events live on the stream, the wall-clock cap's
// wrap-up answer, and the continue prompt of a long edit.
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { sampleContract } from "./support/fixtures.js";
import { type JobJson, readSse, startJob, waitForJob } from "./support/jobs.js";
import { delayed, type ScriptedOpenAi, scriptedEngine, startScriptedOpenAi } from "./support/scripted-openai.js";
import { startTestStack, type TestStack } from "./support/stack.js";

let model: ScriptedOpenAi;
let stack: TestStack;
let capped: TestStack;
let key: string;
let cappedKey: string;

const call = (name: string, args: unknown) => ({ name, arguments: JSON.stringify(args) });

beforeAll(async () => {
  model = await startScriptedOpenAi();
  const openai = scriptedEngine(model, { requestTimeoutMs: 60_000, maxSteps: 3 });
  // One worker, so the script is consumed by one job at a time and a second job stays pending.
  const jobs = { concurrency: 1, heartbeatMs: 200, leaseMs: 3000, pollMs: 200 };
  [stack, capped] = await Promise.all([
    startTestStack(inject("infra"), { name: "jobs_openai", openai, jobs }),
    startTestStack(inject("infra"), { name: "jobs_capped", openai, jobs, aiTimeoutMs: 1500 }),
  ]);
  key = await stack.createKey("olga");
  cappedKey = await capped.createKey("olga");
});
afterAll(async () => {
  await Promise.all([stack?.close(), capped?.close()]);
  await model?.close();
});

async function cancel(s: TestStack, k: string, jobId: string) {
  const res = await s.call("POST", `/v1/jobs/${jobId}/cancel`, { key: k });
  return { status: res.status, body: (await res.json()) as JobJson & { stop_state: string; detail?: string } };
}

describe("cancel", () => {
  it("stops a running job here and a pending one before it starts; nothing is charged", async () => {
    model.push(delayed(20_000, { content: "too late" }));
    const asked = model.requests.length;
    const running = await startJob(stack, key, { message: "Rewrite everything", document_html: sampleContract() });
    const queued = await startJob(stack, key, { message: "Then this", session_id: running.body.session_id });
    await waitForJob(stack, key, running.body.job_id, ["in_progress"]);
    // Cancel mid-answer: once the model has the request (so its scripted step is used up).
    while (model.requests.length === asked) await new Promise((r) => setTimeout(r, 20));
    expect((await waitForJob(stack, key, queued.body.job_id, ["pending"])).status).toBe("pending");

    const stopped = await cancel(stack, key, queued.body.job_id);
    expect(stopped.status).toBe(200);
    expect(stopped.body).toMatchObject({ status: "cancelled", stop_state: "stopped_here" });

    const started = Date.now();
    const res = await cancel(stack, key, running.body.job_id);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ status: "cancelled", stop_state: "stopped_here" });
    expect(Date.now() - started).toBeLessThan(15_000);
    expect(res.body).not.toHaveProperty("result");

    const stream = await readSse(stack, `/v1/chat/${running.body.session_id}/stream?job_id=${running.body.job_id}`, {
      headers: { Authorization: `Bearer ${key}` },
    });
    expect(stream.events.at(-1)).toMatchObject({ event: "error", data: { error: "Job cancelled" } });
    // Both reservations were released.
    const usage = await stack.billing.getUsage({}, { principal: await principalOf(stack, key) });
    expect(usage.usage?.monthlyUsed).toBe(0);
  });
});

describe("dispatch", () => {
  it("hands a job to an idle worker at once, queues the next while it is busy, and runs both once", async () => {
    model.push(delayed(2500, { content: "First done." }));
    model.push({ content: "Second done." });
    const first = await startJob(stack, key, { message: "First", document_html: sampleContract() });
    const second = await startJob(stack, key, { message: "Second", document_html: sampleContract() });
    expect(first.body.status).toBe("pending");
    // The only worker took the first job at its creation: the row is leased to it.
    const leases = await stack
      .agentDb("agent.jobs")
      .whereIn("id", [first.body.job_id, second.body.job_id])
      .select("id", "lease_owner");
    const leaseOf = new Map(leases.map((r: { id: string; lease_owner: string | null }) => [r.id, r.lease_owner]));
    expect(leaseOf.get(first.body.job_id)).toMatch(/\/0$/);
    expect((await waitForJob(stack, key, second.body.job_id, ["pending"])).status).toBe("pending");
    const done = await Promise.all([
      waitForJob(stack, key, first.body.job_id, ["completed"]),
      waitForJob(stack, key, second.body.job_id, ["completed"]),
    ]);
    expect(done.map((j) => j.result?.response)).toEqual(["First done.", "Second done."]);
    const attempts = await stack
      .agentDb("agent.jobs")
      .whereIn("id", [first.body.job_id, second.body.job_id])
      .pluck("attempts");
    expect(attempts.sort()).toEqual([1, 1]);
  });

  it("leaves a pending job leased to another worker alone until its lease lapses", async () => {
    model.push({ content: "Picked up." });
    // A job handed to a worker of an instance that died before claiming it: only the lease is left.
    const queued = await startJob(stack, key, { message: "Orphan", session_id: "orphan-session" });
    await waitForJob(stack, key, queued.body.job_id, ["completed"]);
    const jobId = queued.body.job_id;
    await stack
      .agentDb("agent.jobs")
      .where({ id: jobId })
      .update({
        status: "pending",
        result: null,
        completed_at: null,
        lease_owner: "gone/0",
        lease_expires_at: stack.agentDb.raw("now() + interval '1500 milliseconds'"),
        attempts: 0,
        state: JSON.stringify({}),
      });
    model.push({ content: "Picked up again." });
    await new Promise((r) => setTimeout(r, 700));
    expect((await stack.agentDb("agent.jobs").where({ id: jobId }).first()).status).toBe("pending");
    const done = await waitForJob(stack, key, jobId, ["completed"]);
    expect(done.result?.response).toBe("Picked up again.");
  });
});

async function principalOf(s: TestStack, k: string) {
  const res = await s.accounts.resolveApiKey({ apiKey: k });
  const p = res.principal;
  return {
    userId: p?.userId ?? "",
    organizationId: p?.organizationId ?? "",
    ownerId: p?.ownerId ?? "",
    plan: p?.plan ?? "",
  };
}

describe("live progress", () => {
  it("streams the intermediate events of a slow tool-call turn as they happen, then final", async () => {
    model.push(
      delayed(300, { toolCalls: [call("search_text", { query: "Governing Law" })] }),
      delayed(300, { toolCalls: [call("get_outline", {})] }),
      delayed(300, { content: "Looked around; nothing to change." }),
    );
    const created = await startJob(stack, key, {
      message: "Look at the governing law",
      document_html: sampleContract(),
    });
    const read = await readSse(stack, `/v1/chat/${created.body.session_id}/stream?job_id=${created.body.job_id}`, {
      headers: { Authorization: `Bearer ${key}` },
    });
    expect(read.ended).toBe(true);
    const names = read.events.map((e) => e.event);
    expect(names[0]).toBe("document_sync");
    expect(names.filter((n) => n === "intermediate").length).toBeGreaterThanOrEqual(1);
    expect(names.slice(-2)).toEqual(["final", "usage"]);
    expect(read.events.at(-2)?.data.result).toMatchObject({ response: "Looked around; nothing to change." });
  });
});

describe("long edits", () => {
  it("past the wall-clock cap an async job completes with a wrap-up message as its AI response", async () => {
    model.push(delayed(5000, { content: "too late" }));
    const created = await startJob(capped, cappedKey, { message: "Slow edit", document_html: sampleContract() });
    const job = await waitForJob(capped, cappedKey, created.body.job_id, ["completed", "failed"], 15_000);
    expect(job.status).toBe("completed");
    expect(job.result?.response).toMatch(/limit/);
    expect(job.result?.usage.was_billable).toBe(false);
  });

  it("pauses at a continue prompt when the step limit is reached, and finishes on continue=false", async () => {
    for (let i = 0; i < 3; i++) model.push({ toolCalls: [call("get_outline", {})] });
    const created = await startJob(stack, key, { message: "Go through every clause", document_html: sampleContract() });
    const paused = await waitForJob(stack, key, created.body.job_id, ["awaiting_approval", "failed", "completed"]);
    expect(paused.status).toBe("awaiting_approval");
    expect(paused.metadata.awaiting_kind).toBe("continue_prompt");
    expect(paused.metadata.pending_changes).toBeUndefined();

    const wrong = await stack.call("POST", `/v1/chat/${paused.session_id}/approve`, {
      key,
      body: { job_id: paused.job_id, approved: true },
    });
    expect(wrong.status).toBe(409);
    const res = await stack.call("POST", `/v1/chat/${paused.session_id}/continue`, {
      key,
      body: { job_id: paused.job_id, continue: false },
    });
    expect(res.status).toBe(200);
    const done = await waitForJob(stack, key, paused.job_id, ["completed"]);
    expect(done.result?.response).toMatch(/stopped after/);
  });

  it("goes on after continue=true and completes with the next turn's answer", async () => {
    for (let i = 0; i < 3; i++) model.push({ toolCalls: [call("get_outline", {})] });
    const created = await startJob(stack, key, { message: "Check every clause", document_html: sampleContract() });
    const paused = await waitForJob(stack, key, created.body.job_id, ["awaiting_approval"]);
    model.push({ content: "All clauses checked." });
    const res = await stack.call("POST", `/v1/chat/${paused.session_id}/continue`, {
      key,
      body: { job_id: paused.job_id, continue: true },
    });
    expect(res.status).toBe(200);
    const done = await waitForJob(stack, key, paused.job_id, ["completed"]);
    expect(done.result?.response).toBe("All clauses checked.");
    // The continued turn was told what happened before it.
    const last = model.requests.at(-1);
    expect(JSON.stringify(last?.messages)).toContain("Check every clause");
  });
});
