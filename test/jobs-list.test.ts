// GET /v1/jobs lists every kind of job (interface-spec endpoint 22, Job; #11): chat jobs (one
// carrying an uploaded file) and attachment_processing jobs together, newest first, `limit` over
// the merged list, `status` in the spec's vocabulary for both kinds (an attachment processing is
// in_progress, one deleted before it ended is cancelled), a job gone 1 hour after it ended, and
// one owner never seeing another's. The job object is read with a strict client-side schema.
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import type { z } from "zod";
import { ListedJobList as JobListSchema, ListedJob as JobSchema } from "./support/client-schemas.js";
import { corpusFile } from "./support/fixtures.js";
import { startJob, waitForJob } from "./support/jobs.js";
import { postMultipart } from "./support/multipart.js";
import { startTestStack, type TestStack } from "./support/stack.js";

type Job = z.output<typeof JobSchema>;

const DOCX_TYPE = "application/vnd.openxmlformats-officedocument.wordprocessingml.document";

let stack: TestStack;
let key: string;
let otherKey: string;
let orgKey: string;
let orgMateKey: string;

beforeAll(async () => {
  stack = await startTestStack(inject("infra"), { name: "jobs_list" });
  [key, otherKey, orgKey, orgMateKey] = await Promise.all([
    stack.createKey("lister"),
    stack.createKey("stranger"),
    stack.createKey("org-lister", { org: "org_jobs" }),
    stack.createKey("org-mate", { org: "org_jobs" }),
  ]);
});
afterAll(async () => {
  await stack?.close();
});

/** GET a job list as a strict client parses it. */
async function listJobs(query: string, k = key): Promise<{ jobs: Job[]; total: number }> {
  const res = await stack.call("GET", `/v1/jobs${query}`, { key: k });
  expect(res.status, await res.clone().text()).toBe(200);
  return JobListSchema.parse(await res.json());
}

async function attach(filename: string, bytes: Buffer, sessionId: string, k = key): Promise<string> {
  const res = await stack.call("POST", "/v1/attachments/upload-base64", {
    key: k,
    body: { filename, file_base64: bytes.toString("base64"), session_id: sessionId },
  });
  expect(res.status, await res.clone().text()).toBe(200);
  return ((await res.json()) as { job_id: string }).job_id;
}

/** Polls GET /v1/jobs/{id} until the attachment job ended. */
async function ended(jobId: string, k = key): Promise<Job> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const res = await stack.call("GET", `/v1/jobs/${jobId}`, { key: k });
    const job = JobSchema.parse(await res.json());
    if (job.status === "completed" || job.status === "failed") return job;
    if (Date.now() > deadline) throw new Error(`attachment job ${jobId} still ${job.status}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

async function chatWithUpload(sessionId: string): Promise<Job> {
  const created = await startJob(stack, key, {
    session_id: sessionId,
    message: 'replace "Body" with "Text"',
    upload_document_base64: {
      filename: "brief.md",
      file_base64: Buffer.from("# Brief\n\nBody of the brief.").toString("base64"),
    },
  });
  expect(created.status).toBe(202);
  return JobSchema.parse(await waitForJob(stack, key, created.body.job_id, ["completed", "failed"]));
}

describe("GET /v1/jobs with chat and attachment jobs", () => {
  const docx = corpusFile("docx/tika-testWORD_various.docx");
  // A 1x1 PNG.
  const png = Buffer.from(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==",
    "base64",
  );
  let docxJob: Job;
  let chatJob: Job;
  let failedJob: Job;
  let pngJob: Job;
  let secondChat: Job;

  beforeAll(async () => {
    // Kinds interleaved in time, so the merged order and limit are tested across them.
    docxJob = await ended(await attach("various.docx", docx, "jl-a"));
    chatJob = await chatWithUpload("jl-chat");
    const locked = await postMultipart(stack, "/v1/attachments/upload", key, {
      file: { bytes: corpusFile("pdf/pdf2json-i43_err_encrypted.pdf"), filename: "locked.pdf" },
      session_id: "jl-b",
    });
    expect(locked.status).toBe(200);
    failedJob = await ended(((await locked.json()) as { job_id: string }).job_id);
    pngJob = await ended(await attach("dot.png", png, "jl-a"));
    secondChat = await chatWithUpload("jl-chat");
  });

  it("lists both kinds, newest first, with the file's name, size and type in metadata", async () => {
    const { jobs, total } = await listJobs("");
    expect(total).toBe(jobs.length);
    expect(jobs.map((j) => j.job_id)).toEqual([
      secondChat.job_id,
      pngJob.job_id,
      failedJob.job_id,
      chatJob.job_id,
      docxJob.job_id,
    ]);
    const created = jobs.map((j) => Date.parse(j.created_at));
    expect(created).toEqual([...created].sort((a, b) => b - a));

    const listedDocx = jobs.find((j) => j.job_id === docxJob.job_id) as Job;
    expect(listedDocx.job_id).toMatch(/^att_[0-9a-f]{32}$/);
    expect(listedDocx).toMatchObject({
      session_id: "jl-a",
      job_type: "attachment_processing",
      status: "completed",
      progress: 100,
      organization_id: null,
      user_id: chatJob.user_id,
      result: { attachment_id: docxJob.job_id, session_id: "jl-a", response: expect.any(String) },
      metadata: {
        filename: "various.docx",
        file_size: docx.length,
        content_type: DOCX_TYPE,
        message: "",
        document_html_provided: false,
      },
    });
    expect(listedDocx.user_id).toEqual(expect.any(String));
    expect(listedDocx).not.toHaveProperty("error");
    expect(Date.parse(listedDocx.updated_at)).toBeGreaterThanOrEqual(Date.parse(listedDocx.created_at));
    // The list shows the job exactly as GET /v1/jobs/{id} does.
    expect(listedDocx).toEqual(docxJob);

    expect(jobs.find((j) => j.job_id === pngJob.job_id)?.metadata).toMatchObject({
      filename: "dot.png",
      file_size: png.length,
      content_type: "image/png",
    });
    const listedFailed = jobs.find((j) => j.job_id === failedJob.job_id) as Job;
    expect(listedFailed).toMatchObject({
      status: "failed",
      progress: 100,
      metadata: { content_type: "application/pdf" },
    });
    expect(listedFailed.error).toMatch(/password/i);
    expect(listedFailed).not.toHaveProperty("result");

    const listedChat = jobs.find((j) => j.job_id === chatJob.job_id) as Job;
    expect(listedChat).toMatchObject({ job_type: "chat", status: "completed", session_id: "jl-chat" });
    expect(listedChat.metadata).toMatchObject({
      filename: "brief.md",
      file_size: Buffer.byteLength("# Brief\n\nBody of the brief."),
      document_html_provided: true,
    });
  });

  it("applies limit to the merged list: each page is the head of the full list", async () => {
    const full = (await listJobs("?compact=true")).jobs.map((j) => j.job_id);
    expect(full).toHaveLength(5);
    for (let limit = 1; limit <= 6; limit++) {
      const page = await listJobs(`?limit=${limit}&compact=true`);
      expect(
        page.jobs.map((j) => j.job_id),
        `limit=${limit}`,
      ).toEqual(full.slice(0, limit));
      expect(page.total).toBe(Math.min(limit, full.length));
    }
    expect((await stack.call("GET", "/v1/jobs?limit=0", { key })).status).toBe(422);
    expect((await stack.call("GET", "/v1/jobs?limit=many", { key })).status).toBe(422);
  });

  it("filters both kinds by the spec's status; any other status lists none", async () => {
    const completed = await listJobs("?status=completed&compact=true");
    expect(completed.jobs.map((j) => j.job_id)).toEqual([
      secondChat.job_id,
      pngJob.job_id,
      chatJob.job_id,
      docxJob.job_id,
    ]);
    const failed = await listJobs("?status=failed");
    expect(failed.jobs.map((j) => j.job_id)).toEqual([failedJob.job_id]);
    for (const status of ["pending", "in_progress", "awaiting_approval", "cancelled"])
      expect((await listJobs(`?status=${status}`)).jobs, status).toEqual([]);
    // Attachment states are not job statuses: "processing" is a word of the attachment vocabulary only.
    for (const status of ["processing", "exploded", "COMPLETED", "constructor", "x".repeat(64)])
      expect(await listJobs(`?status=${encodeURIComponent(status)}`), status).toEqual({ jobs: [], total: 0 });
    expect((await stack.call("GET", `/v1/jobs?status=${"x".repeat(65)}`, { key })).status).toBe(422);
  });

  it("lists a session's jobs of both kinds and nothing of other sessions", async () => {
    const res = await stack.call("GET", "/v1/sessions/jl-a/jobs", { key });
    expect(res.status).toBe(200);
    const { jobs } = JobListSchema.parse(await res.json());
    expect(jobs.map((j) => j.job_id)).toEqual([pngJob.job_id, docxJob.job_id]);
    const chat = JobListSchema.parse(
      await (await stack.call("GET", "/v1/sessions/jl-chat/jobs?limit=1", { key })).json(),
    );
    expect(chat.jobs.map((j) => j.job_id)).toEqual([secondChat.job_id]);
  });

  it("shows an attachment deleted while processing as cancelled, and one deleted after it ended not at all", async () => {
    const cancelled = await attach("later.md", Buffer.from("# Later\n\nNot needed."), "jl-c");
    await ended(cancelled);
    // A delete that lands while processing runs: processing then stops and leaves the state as it was.
    await stack.documentsDb.raw(
      "update ingest.attachments set status = 'processing', deleted_at = now(), updated_at = now() where id = ?",
      [cancelled],
    );
    const job = JobSchema.parse(await (await stack.call("GET", `/v1/jobs/${cancelled}`, { key })).json());
    expect(job).toMatchObject({ job_id: cancelled, status: "cancelled", progress: 100 });
    expect(job).not.toHaveProperty("result");
    expect(job).not.toHaveProperty("error");
    expect((await listJobs("?status=cancelled")).jobs.map((j) => j.job_id)).toEqual([cancelled]);

    const removed = await attach("gone.md", Buffer.from("# Gone\n\nRemoved."), "jl-c");
    await ended(removed);
    expect((await stack.call("DELETE", `/v1/attachments/${removed}`, { key })).status).toBe(200);
    expect((await stack.call("GET", `/v1/jobs/${removed}`, { key })).status).toBe(404);
    expect((await listJobs("")).jobs.map((j) => j.job_id)).not.toContain(removed);
  });

  it("removes an attachment job 1 hour after it ended; the attachment itself stays", async () => {
    const old = await attach("old.md", Buffer.from("# Old\n\nLong done."), "jl-old");
    await ended(old);
    await stack.documentsDb.raw(
      "update ingest.attachments set updated_at = now() - interval '59 minutes' where id = ?",
      [old],
    );
    expect((await listJobs("")).jobs.map((j) => j.job_id)).toContain(old);
    await stack.documentsDb.raw(
      "update ingest.attachments set updated_at = now() - interval '61 minutes' where id = ?",
      [old],
    );
    expect((await listJobs("")).jobs.map((j) => j.job_id)).not.toContain(old);
    expect((await stack.call("GET", `/v1/jobs/${old}`, { key })).status).toBe(404);
    const status = (await (await stack.call("GET", "/v1/attachments/status/jl-old", { key })).json()) as {
      attachments: { attachment_id: string; status: string }[];
    };
    expect(status.attachments).toEqual([expect.objectContaining({ attachment_id: old, status: "completed" })]);
  });

  it("never shows one owner's jobs to another; an organization's jobs are its members'", async () => {
    expect(await listJobs("", otherKey)).toEqual({ jobs: [], total: 0 });
    expect(await listJobs("?status=completed", otherKey)).toEqual({ jobs: [], total: 0 });
    expect((await stack.call("GET", `/v1/jobs/${docxJob.job_id}`, { key: otherKey })).status).toBe(404);
    // The same session id is the other owner's own (empty) session: none of the first owner's jobs.
    await attach("theirs.md", Buffer.from("# Theirs"), "jl-a", otherKey);
    const theirs = await listJobs("", otherKey);
    expect(theirs.jobs.map((j) => j.metadata.filename)).toEqual(["theirs.md"]);
    expect((await listJobs("")).jobs.map((j) => j.metadata.filename)).not.toContain("theirs.md");

    const orgJob = await ended(await attach("org.md", Buffer.from("# Org\n\nShared."), "jl-org", orgKey), orgKey);
    const mate = await listJobs("", orgMateKey);
    expect(mate.jobs.map((j) => j.job_id)).toEqual([orgJob.job_id]);
    expect(mate.jobs[0].organization_id).toEqual(expect.any(String));
    expect(mate.jobs[0].user_id).toBeNull();
    expect((await listJobs("")).jobs.map((j) => j.job_id)).not.toContain(orgJob.job_id);
    expect((await listJobs("", otherKey)).jobs.map((j) => j.job_id)).not.toContain(orgJob.job_id);
  });
});
