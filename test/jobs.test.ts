// Async chat jobs end to end with the offline engine: POST /v1/chat/async, the job endpoints,
// cancel, human approval (single, batch, deny with feedback), the progress stream and retention.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startStackWithKey } from "./support/file-stack.js";
import { sampleContract } from "./support/fixtures.js";
import {
  ADD_SECTION,
  getJob,
  type JobJson,
  readSse,
  startJob,
  startJobAwaitingApproval,
  waitForJob,
} from "./support/jobs.js";
import type { TestStack } from "./support/stack.js";

let stack: TestStack;
let key: string;

beforeAll(async () => {
  ({ stack, key } = await startStackWithKey({ name: "jobs", jobs: { sweepMs: 300 }, streamHeartbeatMs: 200 }, "alice"));
});
afterAll(() => stack?.close());

async function historyHtml(sessionId: string): Promise<string> {
  const res = await stack.call("GET", `/v1/sessions/${sessionId}/history`, { key });
  const body = (await res.json()) as { document_state: { html_content?: string } | null };
  return body.document_state?.html_content ?? "";
}

async function approve(sessionId: string, body: Record<string, unknown>) {
  const res = await stack.call("POST", `/v1/chat/${sessionId}/approve`, { key, body });
  return {
    status: res.status,
    body: (await res.json()) as {
      job: JobJson;
      applied: string[];
      denied: string[];
      version_id?: string;
      detail?: string;
    },
  };
}

describe("async chat jobs", () => {
  let done: JobJson;

  it("answers at once with a pending job and runs it to completed with the chat result", async () => {
    const created = await startJob(stack, key, {
      message: 'replace "Acme Corporation" with "Globex Inc"',
      document_html: sampleContract(),
    });
    expect(created.status).toBe(202);
    expect(created.body.status).toBe("pending");
    expect(created.body.job_id).toMatch(/^job_[0-9a-f]+$/);
    expect(created.body.session_id).toMatch(/^[a-zA-Z0-9_\-.]+$/);
    expect(created.body.message).toEqual(expect.any(String));
    expect(created.body.usage.monthly_used).toBeGreaterThanOrEqual(0);

    done = await waitForJob(stack, key, created.body.job_id, ["completed", "failed"]);
    expect(done.status).toBe("completed");
    expect(done.progress).toBe(100);
    expect(done.job_type).toBe("chat");
    expect(done.session_id).toBe(created.body.session_id);
    expect(done.user_id).toBeTruthy();
    expect(done.organization_id).toBeNull();
    expect(done).not.toHaveProperty("error");
    expect(done.metadata.pending_changes).toBeUndefined();
    expect(done.metadata.message).toContain("Globex Inc");
    expect(done.metadata.document_html_provided).toBe(true);
    expect(Date.parse(done.updated_at)).toBeGreaterThanOrEqual(Date.parse(done.created_at));
    const diffs = done.result?.document_changes?.chunk_diffs ?? [];
    expect(diffs).toHaveLength(1);
    expect(diffs[0].new_html).toContain("Globex Inc");
    expect(done.result?.usage.ops_charged).toBe(1);
    const types = (done.metadata.intermediate_responses ?? []).map((e) => e.type);
    expect(types[0]).toBe("document_sync");
    expect(types.slice(-2)).toEqual(["final", "usage"]);
    const sequences = (done.metadata.intermediate_responses ?? []).map((e) => e.sequence);
    expect(sequences).toEqual(sequences.map((_, i) => i + 1));
  });

  it("omits result bodies and events with compact=true and lists jobs by owner, status and session", async () => {
    const compact = await getJob(stack, key, done.job_id, "?compact=true");
    expect(compact.status).toBe(200);
    expect(compact.body.status).toBe("completed");
    expect(compact.body).not.toHaveProperty("result");
    expect(compact.body.metadata).not.toHaveProperty("intermediate_responses");

    const all = await stack.call("GET", "/v1/jobs?status=completed&compact=true", { key });
    const list = (await all.json()) as { jobs: JobJson[]; total: number };
    expect(list.total).toBe(list.jobs.length);
    expect(list.jobs.map((j) => j.job_id)).toContain(done.job_id);
    expect(list.jobs.every((j) => j.status === "completed")).toBe(true);

    const none = await stack.call("GET", "/v1/jobs?status=failed", { key });
    expect(((await none.json()) as { jobs: JobJson[] }).jobs.map((j) => j.job_id)).not.toContain(done.job_id);
    // A status outside the vocabulary matches nothing (#11): an empty list, not a 422.
    const unknown = await stack.call("GET", "/v1/jobs?status=exploded", { key });
    expect(unknown.status).toBe(200);
    expect(await unknown.json()).toEqual({ jobs: [], total: 0 });
    const clamped = await stack.call("GET", "/v1/jobs?limit=100000&compact=true", { key });
    expect(clamped.status).toBe(200);
    expect((await stack.call("GET", "/v1/jobs?limit=0", { key })).status).toBe(422);

    const bySession = await stack.call("GET", `/v1/sessions/${done.session_id}/jobs?limit=5`, { key });
    const sessionList = (await bySession.json()) as { jobs: JobJson[]; total: number };
    expect(sessionList.jobs[0].job_id).toBe(done.job_id);
    expect(sessionList.jobs[0].result?.response).toEqual(expect.any(String));
  });

  it("hides another owner's job (404) and keeps organization jobs apart from user jobs", async () => {
    const other = await stack.createKey("mallory");
    expect((await getJob(stack, other, done.job_id)).status).toBe(404);
    const theirs = await stack.call("GET", "/v1/jobs", { key: other });
    expect(((await theirs.json()) as { jobs: JobJson[] }).jobs).toEqual([]);
    expect((await stack.call("POST", `/v1/jobs/${done.job_id}/cancel`, { key: other })).status).toBe(404);
    expect((await stack.call("GET", `/v1/sessions/${done.session_id}/jobs`, { key: other })).status).toBe(404);

    const orgKey = await stack.createKey("bob", { org: "org_acme" });
    const created = await startJob(stack, orgKey, { message: "please write me a poem" });
    const job = await waitForJob(stack, orgKey, created.body.job_id, ["completed"]);
    expect(job.organization_id).toEqual(expect.any(String));
    expect(job.user_id).toBeNull();
    expect(job.result?.usage.was_billable).toBe(false);
  });

  it("refuses to cancel a terminal job with 409 naming its status", async () => {
    const res = await stack.call("POST", `/v1/jobs/${done.job_id}/cancel`, { key });
    expect(res.status).toBe(409);
    expect(((await res.json()) as { detail: string }).detail).toContain("completed");
    expect((await stack.call("POST", "/v1/jobs/job_0000/cancel", { key })).status).toBe(404);
  });

  it("fails a job whose turn fails, with the error, no result, an error event and nothing charged", async () => {
    const created = await startJob(stack, key, { message: 'replace "a" with "b"', document_id: "doc_missing" });
    expect(created.status).toBe(202);
    const failed = await waitForJob(stack, key, created.body.job_id, ["failed", "completed"]);
    expect(failed.status).toBe("failed");
    expect(failed.error).toBe("Document not found");
    expect(failed).not.toHaveProperty("result");
    const stream = await readSse(stack, `/v1/chat/${failed.session_id}/stream?job_id=${failed.job_id}&api_key=${key}`);
    expect(stream.events.at(-1)).toEqual({
      id: expect.any(String),
      event: "error",
      data: { error: "Document not found" },
    });
    expect(stream.ended).toBe(true);
  });

  it("validates the async request like sync chat (400 empty message, 422 bad fields, 401 without key)", async () => {
    expect((await stack.call("POST", "/v1/chat/async", { key, body: { message: "  " } })).status).toBe(400);
    expect(
      (await stack.call("POST", "/v1/chat/async", { key, body: { message: "x", model_tier: "giant" } })).status,
    ).toBe(422);
    expect((await stack.call("POST", "/v1/chat/async", { body: { message: "x" } })).status).toBe(401);
  });

  it("refuses an upload ingest cannot convert with 415 at creation, creating no job and charging nothing", async () => {
    const k = await stack.createKey("uma");
    const res = await stack.call("POST", "/v1/chat/async", {
      key: k,
      body: {
        message: "tidy it up",
        upload_document_base64: { filename: "old.doc", file_base64: Buffer.from("legacy").toString("base64") },
      },
    });
    expect(res.status).toBe(415);
    const body = (await res.json()) as { detail: string };
    for (const ext of [".pdf", ".docx", ".txt", ".rtf", ".md", ".html", ".htm"]) expect(body.detail).toContain(ext);
    const jobs = (await (await stack.call("GET", "/v1/jobs", { key: k })).json()) as { total: number };
    expect(jobs.total).toBe(0);
    const usage = (await (await stack.call("POST", "/v1/chat", { key: k, body: { message: "hello" } })).json()) as {
      usage: { monthly_used: number };
    };
    expect(usage.usage.monthly_used).toBe(0);
  });

  it("reports the 202's hold as no charge, and the real charge in the job's result", async () => {
    const k = await stack.createKey("rita");
    const created = await startJob(stack, k, {
      message: 'replace "Acme Corporation" with "Globex Inc"',
      document_html: sampleContract(),
    });
    expect(created.status).toBe(202);
    // The hold counts against the quota (the figures that decide the next 429), but is not a charge.
    expect(created.body.usage).toMatchObject({
      was_billable: false,
      ops_charged: 0,
      bucket_used: "none",
      monthly_used: 1,
      monthly_limit: 500,
      monthly_remaining: 499,
    });
    expect(created.body.usage).not.toHaveProperty("redemption_id");
    const job = await waitForJob(stack, k, created.body.job_id, ["completed", "failed"]);
    expect(job.status).toBe("completed");
    expect(job.result?.usage).toMatchObject({
      was_billable: true,
      ops_charged: 1,
      monthly_used: 1,
      monthly_remaining: 499,
    });
  });
});

describe("human approval", () => {
  it("stages changes without committing, applies an approved one and drops a denied one with feedback", async () => {
    const created = await startJob(stack, key, {
      message: ADD_SECTION,
      document_html: sampleContract(),
      approval_mode: "ask_every_time",
    });
    const sid = created.body.session_id;
    const waiting = await waitForJob(stack, key, created.body.job_id, ["awaiting_approval", "failed"]);
    expect(waiting.status).toBe("awaiting_approval");
    expect(waiting.metadata.awaiting_kind).toBe("changes");
    const pending = waiting.metadata.pending_changes ?? [];
    expect(pending).toHaveLength(2);
    expect(pending.every((c) => c.operation === "create" && c.batch_total === 2)).toBe(true);
    expect(new Set(pending.map((c) => c.batch_id)).size).toBe(1);
    expect(waiting).not.toHaveProperty("result");
    // Staged, not committed: the stored document does not have the section yet.
    expect(await historyHtml(sid)).not.toContain("Liability");
    // The stream carries each proposal and then the turn's batch, and stays open while waiting.
    const stream = await readSse(stack, `/v1/chat/${sid}/stream?job_id=${waiting.job_id}&api_key=${key}`, {
      stopAfter: (e) => e.event === "proposed_change_batch",
      timeoutMs: 5000,
    });
    const proposals = stream.events.filter((e) => e.event === "proposed_change");
    // Clients read the record from the envelope's content (test/sse-contract.test.ts has the details).
    const proposed = proposals.map((e) => JSON.parse(String(e.data.content)) as { change_id: string });
    expect(proposed.map((c) => c.change_id).sort()).toEqual(pending.map((c) => c.change_id).sort());
    const batch = stream.events.at(-1);
    expect(batch?.event).toBe("proposed_change_batch");
    expect((JSON.parse(String(batch?.data.content)) as { changes: unknown[] }).changes).toHaveLength(2);
    expect(stream.ended).toBe(false);
    // While the job waits, the open stream carries comment heartbeats only.
    const idle = await readSse(stack, `/v1/chat/${sid}/stream?job_id=${waiting.job_id}&last_sequence=${batch?.id}`, {
      headers: { Authorization: `Bearer ${key}` },
      timeoutMs: 1000,
    });
    expect(idle.events).toEqual([]);
    expect(idle.comments).toBeGreaterThanOrEqual(1);

    const heading = pending.find((c) => c.new_html.includes("<h2"));
    const paragraph = pending.find((c) => !c.new_html.includes("<h2"));
    expect(heading && paragraph).toBeTruthy();
    const first = await approve(sid, { job_id: waiting.job_id, approved: true, change_id: heading?.change_id });
    expect(first.status).toBe(200);
    expect(first.body.applied).toEqual([heading?.change_id]);
    expect(first.body.version_id).toEqual(expect.any(String));
    expect(first.body.job.status).toBe("awaiting_approval");
    expect(first.body.job.metadata.pending_changes?.map((c) => c.change_id)).toEqual([paragraph?.change_id]);
    expect(await historyHtml(sid)).toContain("Liability</h2>");

    const second = await approve(sid, {
      job_id: waiting.job_id,
      approved: false,
      change_id: paragraph?.change_id,
      feedback: "Say which liability",
    });
    expect(second.status).toBe(200);
    expect(second.body.denied).toEqual([paragraph?.change_id]);
    // Nothing applied: no version to report, and no null in its place.
    expect(second.body.applied).toEqual([]);
    expect(second.body).not.toHaveProperty("version_id");
    const finished = await waitForJob(stack, key, waiting.job_id, ["completed"]);
    expect(finished.metadata.feedback).toEqual(["Say which liability"]);
    expect(finished.metadata.pending_changes).toBeUndefined();
    expect(finished.result?.response).toContain("Say which liability");
    expect(finished.result?.response).toMatch(
      /^1 of the 2 changes I proposed was applied; 1 was declined and not made/,
    );
    expect(finished.result?.document_changes?.requires_approval).toBe(true);
    expect(finished.result?.document_changes?.chunk_diffs.map((d) => d.chunk_id)).toEqual([heading?.chunk_id]);
    expect(finished.result?.usage.ops_charged).toBe(1);
    const html = await historyHtml(sid);
    expect(html).toContain("Liability</h2>");
    expect(html).not.toContain("Liability is capped.");

    // The feedback is part of the session's history, so the agent's next turn sees it.
    const history = await stack.call("GET", `/v1/sessions/${sid}/history`, { key });
    const messages = ((await history.json()) as { messages: { sender: string; content: string }[] }).messages;
    expect(messages.at(-1)?.content).toContain("Say which liability");

    // Decisions on a job that no longer waits: 409.
    const late = await approve(sid, { job_id: waiting.job_id, approved: true });
    expect(late.status).toBe(409);
  });

  it("decides a batch in one call, commits the approved ones as one version, and checks ids", async () => {
    const { sid, waiting } = await startJobAwaitingApproval(stack, key);
    const [a, b] = waiting.metadata.pending_changes ?? [];

    expect((await approve(sid, { job_id: waiting.job_id, approved: true, change_id: "nope" })).status).toBe(400);
    expect((await approve("some-other-session", { job_id: waiting.job_id, approved: true })).status).toBe(404);
    expect((await approve(sid, { job_id: waiting.job_id })).status).toBe(422);

    const res = await approve(sid, {
      job_id: waiting.job_id,
      approved: true,
      changes: [
        { change_id: a.change_id, approved: true },
        { change_id: b.change_id, approved: true },
      ],
    });
    expect(res.status).toBe(200);
    expect(res.body.applied.sort()).toEqual([a.change_id, b.change_id].sort());
    const finished = await waitForJob(stack, key, waiting.job_id, ["completed"]);
    expect(finished.result?.document_changes?.version_id).toBe(res.body.version_id);
    expect(await historyHtml(sid)).toContain("Liability is capped.");
  });

  it("after every change is declined, the reply says nothing was applied instead of describing the edits as done", async () => {
    const { sid, waiting } = await startJobAwaitingApproval(stack, key);
    const res = await approve(sid, { job_id: waiting.job_id, approved: false, feedback: "Keep the old terms" });
    expect(res.status).toBe(200);
    const finished = await waitForJob(stack, key, waiting.job_id, ["completed"]);
    const reply = String(finished.result?.response);
    expect(reply).toMatch(/^I proposed \d+ changes? and none was applied/);
    expect(reply).toContain("Keep the old terms");
    expect(reply).toContain("What I had proposed:");
    expect(await historyHtml(sid)).not.toContain("Liability is capped.");
  });

  it("applies changes once when the same decision arrives twice at the same time", async () => {
    const { sid, waiting } = await startJobAwaitingApproval(stack, key);
    const both = await Promise.all([
      approve(sid, { job_id: waiting.job_id, approved: true }),
      approve(sid, { job_id: waiting.job_id, approved: true }),
    ]);
    expect(both.map((r) => r.status).sort()).toEqual([200, 409]);
    const html = await historyHtml(sid);
    expect(html.split("Liability is capped.").length).toBe(2);
  });

  it("cancels a job awaiting approval: staged changes are discarded and nothing is charged", async () => {
    const before = await stack.call("GET", "/v1/jobs?limit=1", { key });
    expect(before.status).toBe(200);
    const { sid, waiting } = await startJobAwaitingApproval(stack, key);
    const res = await stack.call("POST", `/v1/jobs/${waiting.job_id}/cancel`, { key });
    expect(res.status).toBe(200);
    const body = (await res.json()) as JobJson & { stop_state: string };
    expect(body.stop_state).toBe("stopped_here");
    expect(body.status).toBe("cancelled");
    expect(body.metadata.pending_changes).toBeUndefined();
    expect(body).not.toHaveProperty("error");
    expect(await historyHtml(sid)).not.toContain("Liability");
    const again = await stack.call("POST", `/v1/jobs/${waiting.job_id}/cancel`, { key });
    expect(again.status).toBe(409);
    expect(((await again.json()) as { detail: string }).detail).toContain("cancelled");
  });
});

describe("progress stream", () => {
  let job: JobJson;

  beforeAll(async () => {
    const created = await startJob(stack, key, {
      message: 'make "thirty (30) days" italic',
      document_html: sampleContract(),
    });
    job = await waitForJob(stack, key, created.body.job_id, ["completed"]);
  });

  it("replays a finished job's events with ids, ends after final and usage, with SSE headers", async () => {
    const read = await readSse(stack, `/v1/chat/${job.session_id}/stream?job_id=${job.job_id}`, {
      headers: { Authorization: `Bearer ${key}` },
    });
    expect(read.status).toBe(200);
    expect(read.headers.get("content-type")).toBe("text/event-stream; charset=utf-8");
    expect(read.headers.get("cache-control")).toBe("no-cache, no-transform");
    expect(read.headers.get("x-accel-buffering")).toBe("no");
    expect(read.ended).toBe(true);
    const names = read.events.map((e) => e.event);
    expect(names[0]).toBe("document_sync");
    expect(String(read.events[0].data.content)).toContain("data-chunk-id");
    expect(names).toContain("intermediate");
    expect(names.slice(-2)).toEqual(["final", "usage"]);
    const final = read.events.at(-2)?.data as { result: { response: string; session_id: string } };
    expect(final.result.session_id).toBe(job.session_id);
    expect(final.result.response).toBe(job.result?.response);
    expect(Object.keys(read.events.at(-1)?.data ?? {}).sort()).toEqual([
      "monthly_limit",
      "monthly_remaining",
      "monthly_used",
    ]);
    const intermediate = read.events.find((e) => e.event === "intermediate");
    expect(intermediate?.data).toMatchObject({ type: "intermediate", sequence: Number(intermediate?.id) });
    expect(read.events.map((e) => Number(e.id))).toEqual(read.events.map((_, i) => i + 1));
  });

  it("replays only later events after last_sequence or Last-Event-ID, with the key in the query", async () => {
    const path = `/v1/chat/${job.session_id}/stream?job_id=${job.job_id}`;
    const total = job.metadata.intermediate_responses?.length ?? 0;
    const byQuery = await readSse(stack, `${path}&last_sequence=${total - 2}&api_key=${key}`);
    expect(byQuery.events.map((e) => e.event)).toEqual(["final", "usage"]);
    const byHeader = await readSse(stack, `${path}&token=${key}`, { headers: { "Last-Event-ID": String(total - 1) } });
    expect(byHeader.events.map((e) => e.event)).toEqual(["usage"]);
  });

  it("needs a key (401) and answers an unknown or foreign job with the spec's error event", async () => {
    const path = `/v1/chat/${job.session_id}/stream?job_id=${job.job_id}`;
    expect((await readSse(stack, path)).status).toBe(401);
    expect((await readSse(stack, `${path}&api_key=sk_${"0".repeat(32)}`)).status).toBe(401);
    const notFound = [{ event: "error", data: { error: "Job not found" } }];
    const unknown = await readSse(stack, `/v1/chat/${job.session_id}/stream?job_id=job_missing&api_key=${key}`);
    expect(unknown.events).toEqual(notFound);
    expect(unknown.ended).toBe(true);
    const other = await stack.createKey("eve");
    const foreign = await readSse(stack, path, { headers: { Authorization: `Bearer ${other}` } });
    expect(foreign.events).toEqual(notFound);
  });
});

describe("crash recovery", () => {
  it("finishes a job whose worker died after committing without running the turn again", async () => {
    const sync = await stack.call("POST", "/v1/chat", { key, body: { message: "please write me a poem" } });
    const sid = ((await sync.json()) as { session_id: string }).session_id;
    const p = (await stack.accounts.resolveApiKey({ apiKey: key })).principal;
    const principal = { userId: p?.userId, organizationId: p?.organizationId, ownerId: p?.ownerId, plan: p?.plan };
    const id = `job_${Date.now().toString(16)}`;
    // The row a worker leaves when it is killed between CommitOperations and completing the job.
    await stack.agentDb("agent.jobs").insert({
      id,
      owner_id: principal.ownerId,
      user_id: principal.userId,
      principal: JSON.stringify(principal),
      session_id: sid,
      status: "in_progress",
      request: JSON.stringify({ message: 'draft an outline for "Q3"', sessionId: sid }),
      metadata: JSON.stringify({ message: 'draft an outline for "Q3"' }),
      state: JSON.stringify({
        committed: { reply: "Recovered after the crash.", operations: 0, title: "", checkpointVersionId: "" },
      }),
      charge_key: `job:${id}`,
      lease_owner: "agent-dead/0",
      lease_expires_at: stack.agentDb.raw("now() - interval '1 second'"),
      attempts: 1,
    });
    const job = await waitForJob(stack, key, id, ["completed", "failed"], 10_000);
    expect(job.status).toBe("completed");
    expect(job.result?.response).toBe("Recovered after the crash.");
    const history = await stack.call("GET", `/v1/sessions/${sid}/history`, { key });
    const messages = ((await history.json()) as { messages: { content: string }[] }).messages;
    expect(messages.filter((m) => m.content === "Recovered after the crash.")).toHaveLength(1);
  });
});

describe("a job taken over after its commit", () => {
  it("reports the edits its first run committed, not none (the rerun's commit is a replay)", async () => {
    const created = await startJob(stack, key, {
      message: 'replace "Acme" with "Zeta"',
      document_html: "<h1>Terms</h1><p>Acme pays in 30 days.</p>",
    });
    const first = await waitForJob(stack, key, created.body.job_id, ["completed"]);
    const diffs = (j: typeof first) =>
      (j.result as { document_changes?: { chunk_diffs?: unknown[] } } | undefined)?.document_changes?.chunk_diffs;
    expect(diffs(first)).toHaveLength(1);
    // What a worker killed between CommitTurn and completing leaves: the job running, nothing
    // recorded as committed, its lease expired; another worker takes it over.
    await stack
      .agentDb("agent.jobs")
      .where({ id: created.body.job_id })
      .update({
        status: "in_progress",
        result: null,
        completed_at: null,
        state: JSON.stringify({}),
        lease_owner: "agent-dead/0",
        lease_expires_at: stack.agentDb.raw("now() - interval '1 second'"),
        attempts: 1,
      });
    const again = await waitForJob(stack, key, created.body.job_id, ["completed", "failed"], 15_000);
    expect(again.status).toBe("completed");
    expect(diffs(again)).toHaveLength(1);
    expect(JSON.stringify(diffs(again))).toContain("Zeta");
  });
});

describe("retention", () => {
  it("deletes a job an hour after completion: GET answers 404 afterwards", async () => {
    const created = await startJob(stack, key, { message: "please write me a poem" });
    const job = await waitForJob(stack, key, created.body.job_id, ["completed"]);
    // Age the job instead of waiting an hour; the sweep (every 300 ms here) does the rest.
    await stack
      .agentDb("agent.jobs")
      .where({ id: job.job_id })
      .update({ completed_at: stack.agentDb.raw("now() - interval '61 minutes'") });
    const deadline = Date.now() + 10_000;
    let status = 200;
    while (status === 200 && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 200));
      status = (await getJob(stack, key, job.job_id)).status;
    }
    expect(status).toBe(404);
    const events = await stack.agentDb("agent.job_events").where({ job_id: job.job_id });
    expect(events).toEqual([]);
  });
});
