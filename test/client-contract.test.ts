// Published clients work unchanged (#11): one session driven end to end by a strict typed client
// (test/support/typed-client.ts) whose schemas come from the spec, not from our code. Every JSON
// body and every SSE event goes through them: sync chat (full, compact), async chat followed on
// the progress stream, approval of a single change and of a batch (approve some, deny some),
// cancel, continue, export, and the error bodies on the way. The model is the scripted
// OpenAI-compatible server, so the turns make several changes and reach the step limit on cue.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  ApproveResponse,
  AsyncChatResponse,
  CancelResponse,
  type ChangeRecord,
  ChatResponse,
  CompactChatResponse,
  ContinueResponse,
  ErrorBody,
  History,
  Job,
  JobList,
  type StreamEvent,
  strictParse,
  ValidationErrorBody,
} from "./support/client-schemas.js";
import { startScriptedStackWithKey } from "./support/file-stack.js";
import type { ScriptedOpenAi } from "./support/scripted-openai.js";
import type { TestStack } from "./support/stack.js";
import { deferred, TypedClient } from "./support/typed-client.js";

let model: ScriptedOpenAi;
let stack: TestStack;
let client: TypedClient;

// The step limit is 3 model requests per turn, so the continue flow can reach it with 3 reads.
beforeAll(async () => {
  let key: string;
  ({ model, stack, key } = await startScriptedStackWithKey(
    { name: "client_contract", jobs: { concurrency: 1, pollMs: 200 }, streamHeartbeatMs: 200 },
    { requestTimeoutMs: 30_000, maxSteps: 3 },
    "contract-client",
  ));
  client = new TypedClient(stack, key);
});
afterAll(async () => {
  await stack?.close();
  await model?.close();
});

/** The document the session edits; its chunk ids are ours, so the scripted model can target them. */
const DOC = [
  '<h1 data-chunk-id="c_title">Consulting Agreement</h1>',
  '<p data-chunk-id="c_parties">This agreement is made between Acme Corporation and Northwind Consulting.</p>',
  '<h2 data-chunk-id="c_fees_h">Fees</h2>',
  '<p data-chunk-id="c_fees">Invoices are due within thirty days of receipt.</p>',
  '<h2 data-chunk-id="c_term_h">Term</h2>',
  '<p data-chunk-id="c_term">This agreement runs for twelve months.</p>',
  '<p data-chunk-id="c_notice">Either party may end it with sixty days of notice.</p>',
  '<h2 data-chunk-id="c_law_h">Governing Law</h2>',
  '<p data-chunk-id="c_law">The laws of New York govern this agreement.</p>',
].join("\n");

const SID = `contract-${Date.now().toString(36)}`;

const tool = (name: string, args: Record<string, unknown>) => ({ name, arguments: JSON.stringify(args) });
const replace = (chunkId: string, html: string, explanation: string) =>
  tool("replace_chunk", { chunk_id: chunkId, html, explanation });

/** The session's current document HTML, read through history as a client restores it. */
async function documentHtml(): Promise<string> {
  const history = await client.send("GET", `/v1/sessions/${SID}/history`, { status: 200, schema: History });
  return history.body.document_state?.html_content ?? "";
}

/** Waits (polling GET /v1/jobs/{id}, each answer parsed) until the job has one of `statuses`. */
async function jobIn(jobId: string, statuses: string[]): Promise<Job> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const { body } = await client.send("GET", `/v1/jobs/${jobId}`, { status: 200, schema: Job });
    if (statuses.includes(body.status)) return body;
    if (Date.now() > deadline) throw new Error(`job ${jobId} still ${body.status}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

const names = (events: StreamEvent[]) => events.map((e) => e.event);

describe("a typed client drives one session end to end", () => {
  it("sync chat, full response: the updated HTML, one change record per edit, usage", async () => {
    model.push(
      {
        toolCalls: [
          replace(
            "c_parties",
            "<p>This agreement is made between Globex Inc and Northwind Consulting.</p>",
            "New client name",
          ),
        ],
      },
      { content: "Renamed the client." },
    );
    const res = await client.send(
      "POST",
      "/v1/chat",
      { status: 200, schema: ChatResponse },
      {
        message: "Our client is now Globex Inc",
        session_id: SID,
        document_html: DOC,
      },
    );
    const { body } = res;
    expect(body.session_id).toBe(SID);
    expect(body.response).toBe("Renamed the client.");
    expect(body.document_changes?.updated_html).toContain("Globex Inc");
    expect(body.document_changes?.chunk_diffs).toEqual([
      expect.objectContaining({ chunk_id: "c_parties", operation: "edit", ai_explanation: "New client name" }),
    ]);
    expect(body.usage).toMatchObject({ ops_charged: 1, was_billable: true, monthly_used: 1 });
    expect(body.usage.monthly_remaining).toBe(body.usage.monthly_limit - body.usage.monthly_used);
  });

  it("sync chat, compact response: chunk_diffs only, no full HTML", async () => {
    model.push(
      {
        toolCalls: [
          replace("c_fees", "<p>Invoices are due within forty-five days of receipt.</p>", "Longer payment term"),
        ],
      },
      { content: "Extended the payment term." },
    );
    const { body } = await client.send(
      "POST",
      "/v1/chat",
      { status: 200, schema: CompactChatResponse },
      {
        message: "Give them 45 days to pay",
        session_id: SID,
        response_mode: "compact",
      },
    );
    expect(body.document_changes).toBeDefined();
    expect(body.document_changes).not.toHaveProperty("updated_html");
    expect(body.document_changes?.chunk_diffs?.map((d) => [d.chunk_id, d.new_html])).toEqual([
      ["c_fees", expect.stringContaining("forty-five days")],
    ]);
  });

  it("async chat with approval: streams the proposals, takes a single decision and a mixed batch, ends on final", async () => {
    model.push(
      {
        toolCalls: [
          replace("c_term", "<p>This agreement runs for twenty-four months.</p>", "Two-year term"),
          replace("c_notice", "<p>Either party may end it with ninety days of notice.</p>", "Longer notice"),
          tool("insert_after_chunk", {
            after_chunk_id: "c_law",
            html: "<p>Disputes go to arbitration.</p>",
            explanation: "Add arbitration",
          }),
        ],
      },
      { content: "I propose three changes." },
    );
    const created = await client.send(
      "POST",
      "/v1/chat/async",
      { status: [200, 202], schema: AsyncChatResponse },
      {
        message: "Make the term two years, notice ninety days, and add arbitration",
        session_id: SID,
        approval_mode: "ask_every_time",
        // A compact client: the job's result, on the stream and over REST, has diffs and no full HTML.
        response_mode: "compact",
      },
    );
    const jobId = created.body.job_id;
    expect(created.body.session_id).toBe(SID);

    // The reader hands the batch over and keeps reading: a batch is not the end of the stream.
    const batchSeen = deferred<StreamEvent & { event: "proposed_change_batch" }>();
    const reading = client.follow(SID, jobId, {
      onEvent: (e) => {
        if (e.event === "proposed_change_batch") batchSeen.resolve(e);
      },
    });
    const { batch } = await batchSeen.promise;
    expect(batch.batch_total).toBe(3);
    const byChunk = (id: string) => batch.changes.find((c) => c.chunk_id === id) as ChangeRecord;
    const term = byChunk("c_term");
    const notice = byChunk("c_notice");
    const arbitration = batch.changes.find((c) => c.operation === "create") as ChangeRecord;
    expect(arbitration).toMatchObject({
      insert_after_chunk_id: "c_law",
      new_html: expect.stringContaining("arbitration"),
    });

    // REST agrees with the stream: the same records are pending, field for field.
    const waiting = await jobIn(jobId, ["awaiting_approval"]);
    expect(waiting.metadata.awaiting_kind).toBe("changes");
    const sortById = (rs: ChangeRecord[]) => [...rs].sort((a, b) => a.change_id.localeCompare(b.change_id));
    expect(sortById(waiting.metadata.pending_changes ?? [])).toEqual(sortById(batch.changes));

    const single = await client.send(
      "POST",
      `/v1/chat/${SID}/approve`,
      { status: 200, schema: ApproveResponse },
      {
        job_id: jobId,
        approved: true,
        change_id: term.change_id,
      },
    );
    expect(single.body.job.status).toBe("awaiting_approval");
    expect(single.body.job.metadata.pending_changes?.map((c) => c.change_id).sort()).toEqual(
      [notice.change_id, arbitration.change_id].sort(),
    );
    expect(await documentHtml()).toContain("twenty-four months");

    const mixed = await client.send(
      "POST",
      `/v1/chat/${SID}/approve`,
      { status: 200, schema: ApproveResponse },
      {
        job_id: jobId,
        approved: true,
        changes: [
          { change_id: notice.change_id, approved: true },
          { change_id: arbitration.change_id, approved: false, feedback: "No arbitration clause" },
        ],
      },
    );
    expect(mixed.body.job.metadata.pending_changes).toBeUndefined();

    const stream = await reading;
    expect(stream.ended).toBe(true);
    const seen = names(stream.events);
    expect(seen.filter((n) => n === "proposed_change")).toHaveLength(3);
    expect(seen.slice(-2)).toEqual(["final", "usage"]);
    const proposed = stream.events.flatMap((e) => (e.event === "proposed_change" ? [e.record] : []));
    expect(sortById(proposed)).toEqual(sortById(batch.changes));
    const final = stream.events.at(-2) as StreamEvent & { event: "final" };
    expect(final.result.session_id).toBe(SID);
    expect(final.result.response).toContain("No arbitration clause");
    strictParse(CompactChatResponse, final.result, "final result of a compact job");

    const done = await jobIn(jobId, ["completed"]);
    strictParse(CompactChatResponse, done.result, "result of a compact job");
    expect(done.result?.document_changes?.chunk_diffs?.map((d) => d.chunk_id).sort()).toEqual(["c_notice", "c_term"]);
    const html = await documentHtml();
    expect(html).toContain("twenty-four months");
    expect(html).toContain("ninety days");
    expect(html).not.toContain("arbitration");

    // An EventSource reconnecting after the end (Last-Event-ID = the last id) learns the outcome
    // again and is told it is over, instead of waiting for events that never come.
    const again = await client.follow(SID, jobId, { lastSequence: Number(stream.events.at(-1)?.id) });
    expect(again.ended).toBe(true);
    expect(names(again.events)).toEqual(["final", "usage"]);

    // Deciding again on a job that no longer waits: 409 with the spec's error body.
    await client.send(
      "POST",
      `/v1/chat/${SID}/approve`,
      { status: 409, schema: ErrorBody },
      { job_id: jobId, approved: true },
    );
  });

  it("cancel: the job is cancelled with stop_state, staged changes are dropped, the stream ends with error", async () => {
    model.push(
      { toolCalls: [replace("c_law", "<p>The laws of Delaware govern this agreement.</p>", "Delaware law")] },
      { content: "Proposed Delaware law." },
    );
    const created = await client.send(
      "POST",
      "/v1/chat/async",
      { status: [200, 202], schema: AsyncChatResponse },
      {
        message: "Switch to Delaware law",
        session_id: SID,
        approval_mode: "ask_every_time",
      },
    );
    const jobId = created.body.job_id;
    const proposed = deferred<void>();
    const reading = client.follow(SID, jobId, {
      onEvent: (e) => {
        if (e.event === "proposed_change_batch") proposed.resolve();
      },
    });
    await proposed.promise;
    const cancelled = await client.send("POST", `/v1/jobs/${jobId}/cancel`, { status: 200, schema: CancelResponse });
    expect(cancelled.body).toMatchObject({ status: "cancelled", stop_state: "stopped_here" });
    expect(cancelled.body.metadata.pending_changes).toBeUndefined();

    const stream = await reading;
    expect(stream.ended).toBe(true);
    expect(stream.events.at(-1)).toMatchObject({ event: "error", error: expect.any(String) });
    expect(await documentHtml()).toContain("New York");

    // A terminal job cannot be cancelled again: 409 naming its status.
    const again = await client.send("POST", `/v1/jobs/${jobId}/cancel`, { status: 409, schema: ErrorBody });
    expect(again.body.detail).toContain("cancelled");
  });

  it("continue: a long edit pauses at a continue prompt, continue=true finishes it on the same stream", async () => {
    const outline = tool("get_outline", {});
    model.push({ toolCalls: [outline] }, { toolCalls: [outline] }, { toolCalls: [outline] });
    // The client sends its copy of the document back (verbatim load), so the turn opens with document_sync.
    const current = await documentHtml();
    const created = await client.send(
      "POST",
      "/v1/chat/async",
      { status: [200, 202], schema: AsyncChatResponse },
      {
        message: "Review every clause, then retitle the agreement",
        session_id: SID,
        document_html: current,
      },
    );
    const jobId = created.body.job_id;
    const reading = client.follow(SID, jobId);
    const paused = await jobIn(jobId, ["awaiting_approval"]);
    expect(paused.metadata.awaiting_kind).toBe("continue_prompt");
    expect(paused.metadata.pending_changes).toBeUndefined();
    // The prompt is the last stored event; the stream carries it as progress text, not as an end.
    const prompt = paused.metadata.intermediate_responses?.at(-1);
    expect(prompt?.content).toEqual(expect.stringMatching(/\S/));

    model.push(
      { toolCalls: [replace("c_title", "<h1>Consulting Services Agreement</h1>", "Clearer title")] },
      { content: "Retitled the agreement." },
    );
    const answer = await client.send(
      "POST",
      `/v1/chat/${SID}/continue`,
      { status: 200, schema: ContinueResponse },
      {
        job_id: jobId,
        continue: true,
      },
    );
    expect(["pending", "in_progress", "completed"]).toContain(answer.body.status);

    const stream = await reading;
    expect(stream.ended).toBe(true);
    expect(names(stream.events).filter((n) => n === "document_sync")).toEqual(["document_sync"]);
    expect(stream.events[0]).toMatchObject({
      event: "document_sync",
      content: expect.stringContaining('data-chunk-id="c_title"'),
    });
    expect(stream.events).toContainEqual(
      expect.objectContaining({ event: "intermediate", sequence: prompt?.sequence, content: prompt?.content }),
    );
    expect(names(stream.events).slice(-2)).toEqual(["final", "usage"]);
    const final = stream.events.at(-2) as StreamEvent & { event: "final" };
    expect(final.result.response).toBe("Retitled the agreement.");
    expect(await documentHtml()).toContain("Consulting Services Agreement");
  });

  it("lists the session's jobs and every job in full and compact form", async () => {
    const session = await client.send("GET", `/v1/sessions/${SID}/jobs`, { status: 200, schema: JobList });
    expect(session.body.jobs.map((j) => j.status)).toEqual(["completed", "cancelled", "completed"]);
    for (const job of session.body.jobs) {
      const full = await client.send("GET", `/v1/jobs/${job.job_id}`, { status: 200, schema: Job });
      expect(full.body.metadata.intermediate_responses?.length).toBeGreaterThan(0);
      const compact = await client.send("GET", `/v1/jobs/${job.job_id}?compact=true`, { status: 200, schema: Job });
      expect(compact.body).not.toHaveProperty("result");
    }
    for (const status of ["completed", "cancelled", "awaiting_approval"]) {
      const listed = await client.send("GET", `/v1/jobs?status=${status}`, { status: 200, schema: JobList });
      expect(listed.body.jobs.every((j) => j.status === status)).toBe(true);
    }
    await client.send("GET", "/v1/jobs/job_0000", { status: 404, schema: ErrorBody });
    const stranger = new TypedClient(stack, `sk_${"0".repeat(32)}`);
    await stranger.send("GET", "/v1/jobs", { status: 401, schema: ErrorBody });
    // An unknown job on the stream: the spec's `error` event, which ends it for the client.
    const unknown = await client.follow(SID, "job_0000");
    expect(unknown.ended).toBe(true);
    expect(unknown.events).toEqual([expect.objectContaining({ event: "error", error: expect.any(String) })]);
    await client.send("GET", "/v1/jobs?limit=0", { status: 422, schema: ValidationErrorBody });
  });

  it("exports the session's document with every approved edit and none of the denied ones", async () => {
    const html = await client.download("/v1/documents/export", {
      session_id: SID,
      format: "html",
      filename: "agreement",
    });
    expect(html.status).toBe(200);
    expect(html.headers.get("content-type")).toMatch(/^text\/html/);
    expect(html.headers.get("content-disposition")).toMatch(/^attachment; filename="?agreement\.html"?/);
    const text = html.bytes.toString("utf8");
    for (const applied of [
      "Consulting Services Agreement",
      "Globex Inc",
      "forty-five days",
      "twenty-four months",
      "ninety days",
      "New York",
    ]) {
      expect(text).toContain(applied);
    }
    expect(text).not.toContain("arbitration");
    expect(text).not.toContain("Delaware");

    const markdown = await client.download("/v1/documents/export", { session_id: SID, format: "markdown" });
    expect(markdown.status).toBe(200);
    expect(markdown.bytes.toString("utf8")).toMatch(/^# Consulting Services Agreement/m);

    // A format outside the enum is a 422 with the validation body.
    const bad = await client.send(
      "POST",
      "/v1/documents/export",
      { status: 422, schema: ValidationErrorBody },
      {
        session_id: SID,
        format: "rtf",
      },
    );
    expect(bad.body.detail[0].loc).toContain("format");
  });

  it("restores the conversation: every turn's user and AI messages, in order", async () => {
    const history = await client.send("GET", `/v1/sessions/${SID}/history`, { status: 200, schema: History });
    const users = history.body.messages.filter((m) => m.sender === "user").map((m) => m.content);
    expect(users[0]).toBe("Our client is now Globex Inc");
    expect(users).toContain("Give them 45 days to pay");
    const turns = history.body.messages.map((m) => m.turn_index);
    expect(turns).toEqual([...turns].sort((a, b) => a - b));
  });
});
