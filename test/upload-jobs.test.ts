// Jobs that carry a file (#11, last item): an async chat sent with upload_document_base64 (or a
// pre-signed document upload's upload_id) names the file in its job metadata (filename, file_size
// in bytes, content_type by extension) exactly as an attachment job does, in GET /v1/jobs,
// GET /v1/jobs/{id} and GET /v1/sessions/{sid}/jobs, full and compact; and a pre-signed upload of
// purpose attachment, once processed, is the session's attachment_processing job, listed with the
// same metadata. Document uploads keep converting. One owner never sees another's jobs or
// uploads. Jobs are read with a strict schema.
import { ingestFilesV1 } from "@redline/grpc-stubs";
import { createRpcClient, RemoteError } from "@redline/service-kit";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { z } from "zod";
import { ListedJobList as JobListSchema, ListedJob as JobSchema } from "./support/client-schemas.js";
import { corpusFile } from "./support/fixtures.js";
import { startJob, waitForJob } from "./support/jobs.js";
import { startTestStack, type TestStack } from "./support/stack.js";

type Job = z.output<typeof JobSchema>;

/** The attachment upload answer (POST /v1/attachments/upload and an attachment upload's process). */
const AttachmentJobSchema = z.strictObject({
  job_id: z.string().regex(/^att_[0-9a-f]{32}$/),
  attachment_id: z.string(),
  session_id: z.string(),
  filename: z.string(),
  status: z.literal("processing"),
  message: z.string().min(1),
});

const DOCX_TYPE = "application/vnd.openxmlformats-officedocument.wordprocessingml.document";
const MD = Buffer.from("# Notes\n\nBody of the notes.\n");
// A 1x1 PNG.
const PNG = Buffer.from(
  "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==",
  "base64",
);

let stack: TestStack;
let key: string;
let otherKey: string;

beforeAll(async () => {
  stack = await startTestStack(inject("infra"), { name: "upload_jobs" });
  [key, otherKey] = await Promise.all([stack.createKey("uploader"), stack.createKey("outsider")]);
});
afterAll(async () => {
  await stack?.close();
});

/** GET a JSON body with status 200, as a strict client parses it. */
async function read<S extends z.ZodType>(schema: S, path: string, k = key): Promise<z.output<S>> {
  const res = await stack.call("GET", path, { key: k });
  expect(res.status, `${path}: ${await res.clone().text()}`).toBe(200);
  return schema.parse(await res.json());
}

/** An async chat loading `filename` from base64 (or, `presigned`, from a pre-signed upload), run to its end. */
async function chatWithUpload(sessionId: string, filename: string, bytes: Buffer, presigned = false): Promise<Job> {
  const file = presigned
    ? { upload_id: await presign(filename, bytes, "document") }
    : { upload_document_base64: { filename, file_base64: bytes.toString("base64") } };
  const created = await startJob(stack, key, {
    session_id: sessionId,
    message: "add a heading saying Reviewed at the start",
    ...file,
  });
  expect(created.status, JSON.stringify(created.body)).toBe(202);
  return JobSchema.parse(await waitForJob(stack, key, created.body.job_id, ["completed", "failed"], 60_000));
}

/** POST /v1/uploads then PUT the bytes to the pre-signed URL; the upload id. */
async function presign(filename: string, bytes: Buffer, purpose: string, k = key, put = true): Promise<string> {
  const res = await stack.call("POST", "/v1/uploads", {
    key: k,
    body: { filename, content_type: "application/octet-stream", size_bytes: bytes.length, purpose },
  });
  expect(res.status, await res.clone().text()).toBe(200);
  const slot = (await res.json()) as { upload_id: string; upload_url: string };
  if (put) expect((await fetch(slot.upload_url, { method: "PUT", body: new Uint8Array(bytes) })).status).toBe(200);
  return slot.upload_id;
}

/** POST /v1/uploads/{id}/process. */
function processUpload(uploadId: string, body: Record<string, unknown>, k = key): Promise<Response> {
  return stack.call("POST", `/v1/uploads/${uploadId}/process`, { key: k, body });
}

/** Polls GET /v1/jobs/{id} until the attachment job ended. */
async function ended(jobId: string): Promise<Job> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const job = await read(JobSchema, `/v1/jobs/${jobId}`);
    if (job.status === "completed" || job.status === "failed") return job;
    if (Date.now() > deadline) throw new Error(`attachment job ${jobId} still ${job.status}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe("async chat jobs loading an upload", () => {
  const docx = corpusFile("docx/tika-testWORD_various.docx");
  let docxJob: Job;
  let mdJob: Job;
  let presignedJob: Job;
  let plainJob: Job;

  beforeAll(async () => {
    docxJob = await chatWithUpload("uj-docx", "Various Report.docx", docx);
    mdJob = await chatWithUpload("uj-md", "notes.MD", MD);
    presignedJob = await chatWithUpload("uj-pre", "Signed Brief.docx", docx, true);
    const plain = await startJob(stack, key, {
      session_id: "uj-md",
      message: "add a heading saying Plain at the start",
      document_html: "<h1>Plain</h1><p>Text.</p>",
    });
    plainJob = JobSchema.parse(await waitForJob(stack, key, plain.body.job_id, ["completed", "failed"]));
  });

  const expected = () => [
    { job: docxJob, metadata: { filename: "Various Report.docx", file_size: docx.length, content_type: DOCX_TYPE } },
    { job: mdJob, metadata: { filename: "notes.MD", file_size: MD.length, content_type: "text/markdown" } },
    {
      job: presignedJob,
      metadata: { filename: "Signed Brief.docx", file_size: docx.length, content_type: DOCX_TYPE },
    },
  ];

  it("name the file in GET /v1/jobs/{id}, full and compact (base64 or pre-signed)", async () => {
    for (const { job, metadata } of expected()) {
      expect(job.status, job.error ?? "").toBe("completed");
      expect(job).toMatchObject({ job_type: "chat", metadata: { ...metadata, document_html_provided: true } });
      expect(job.result).toBeDefined();
      const compact = await read(JobSchema, `/v1/jobs/${job.job_id}?compact=true`);
      expect(compact.metadata).toMatchObject(metadata);
      expect(compact).not.toHaveProperty("result");
      expect(compact.metadata).not.toHaveProperty("intermediate_responses");
    }
  });

  it("name the file in GET /v1/jobs and GET /v1/sessions/{sid}/jobs, full and compact", async () => {
    for (const query of ["", "?compact=true"]) {
      const { jobs } = await read(JobListSchema, `/v1/jobs${query}`);
      expect(jobs.map((j) => j.job_id)).toEqual([plainJob.job_id, presignedJob.job_id, mdJob.job_id, docxJob.job_id]);
      for (const { job, metadata } of expected()) {
        expect(jobs.find((j) => j.job_id === job.job_id)?.metadata, query).toMatchObject(metadata);
        const session = await read(JobListSchema, `/v1/sessions/${job.session_id}/jobs${query}`);
        expect(session.jobs.find((j) => j.job_id === job.job_id)?.metadata, query).toMatchObject(metadata);
      }
      // The full list shows a job exactly as GET /v1/jobs/{id} does.
      if (query === "") expect(jobs.find((j) => j.job_id === docxJob.job_id)).toEqual(docxJob);
    }
  });

  it("leave the three file fields out of a job without an upload (absent, never null or empty)", async () => {
    expect(plainJob.status).toBe("completed");
    expect(plainJob.metadata.document_html_provided).toBe(true);
    for (const field of ["filename", "file_size", "content_type"]) {
      expect(plainJob.metadata).not.toHaveProperty(field);
    }
  });

  it("still refuse an upload of an unconverted extension with 415, creating no job", async () => {
    const res = await stack.call("POST", "/v1/chat/async", {
      key,
      body: {
        message: "edit",
        upload_document_base64: { filename: "old.doc", file_base64: MD.toString("base64") },
      },
    });
    expect(res.status).toBe(415);
    expect((await read(JobListSchema, "/v1/jobs?compact=true")).jobs).toHaveLength(4);
  });

  it("refuse a pre-signed upload that is not a loadable document of the caller's, creating no job", async () => {
    const chat = (body: Record<string, unknown>, k = key) =>
      stack.call("POST", "/v1/chat/async", { key: k, body: { message: "edit", ...body } });
    const attachment = await presign("notes.md", MD, "attachment");
    const wrongPurpose = await chat({ upload_id: attachment });
    expect(wrongPurpose.status).toBe(400);
    expect(((await wrongPurpose.json()) as { detail: string }).detail).toMatch(/purpose attachment/);
    const notPut = await presign("notes.md", MD, "document", key, false);
    expect((await chat({ upload_id: notPut })).status).toBe(404);
    const document = await presign("notes.md", MD, "document");
    expect((await chat({ upload_id: document }, otherKey)).status).toBe(404);
    const both = { filename: "notes.md", file_base64: MD.toString("base64") };
    expect((await chat({ upload_id: document, upload_document_base64: both })).status).toBe(400);
    expect((await read(JobListSchema, "/v1/jobs?compact=true")).jobs).toHaveLength(4);
    expect(await read(JobListSchema, "/v1/jobs", otherKey)).toEqual({ jobs: [], total: 0 });
  });
});

describe("POST /v1/uploads/{id}/process on an attachment upload", () => {
  const brief = corpusFile("docx/tika-testWORD_various.docx");
  let docJob: Job;
  let imageJob: Job;
  let minted: z.output<typeof AttachmentJobSchema>;

  beforeAll(async () => {
    const uploadId = await presign("Brief.docx", brief, "attachment");
    const res = await processUpload(uploadId, { session_id: "uj-att" });
    expect(res.status, await res.clone().text()).toBe(200);
    const answered = AttachmentJobSchema.parse(await res.json());
    expect(answered).toMatchObject({ job_id: answered.attachment_id, session_id: "uj-att", filename: "Brief.docx" });
    docJob = await ended(answered.job_id);

    // An image has no document converter: only the attachment path takes it.
    const png = await presign("dot.png", PNG, "attachment");
    imageJob = await ended(
      AttachmentJobSchema.parse(await (await processUpload(png, { session_id: "uj-att" })).json()).job_id,
    );

    // Without session_id a session is minted, as POST /v1/attachments/upload does.
    const md = await presign("notes.md", MD, "attachment");
    minted = AttachmentJobSchema.parse(await (await processUpload(md, {})).json());
    await ended(minted.job_id);
  });

  it("creates the attachment_processing job, listed with its metadata like any attachment", async () => {
    expect(docJob).toMatchObject({
      job_type: "attachment_processing",
      status: "completed",
      session_id: "uj-att",
      result: { attachment_id: docJob.job_id, session_id: "uj-att" },
      metadata: { filename: "Brief.docx", file_size: brief.length, content_type: DOCX_TYPE },
    });
    expect(imageJob.metadata).toMatchObject({ filename: "dot.png", file_size: PNG.length, content_type: "image/png" });
    const { jobs } = await read(JobListSchema, "/v1/jobs?status=completed");
    expect(jobs.find((j) => j.job_id === docJob.job_id)).toEqual(docJob);
    const session = await read(JobListSchema, "/v1/sessions/uj-att/jobs?compact=true");
    expect(session.jobs.map((j) => j.job_id)).toEqual([imageJob.job_id, docJob.job_id]);
    expect(session.jobs[1].metadata).toMatchObject({ filename: "Brief.docx", content_type: DOCX_TYPE });

    expect(minted.session_id).not.toBe("");
    const mintedJob = await read(JobSchema, `/v1/jobs/${minted.job_id}`);
    expect(mintedJob).toMatchObject({
      session_id: minted.session_id,
      metadata: { filename: "notes.md", file_size: MD.length, content_type: "text/markdown" },
    });
  });

  it("is one of the session's attachments, ready for the agent", async () => {
    const status = (await (await stack.call("GET", "/v1/attachments/status/uj-att", { key })).json()) as {
      attachments: { attachment_id: string; status: string; text_length: number | null }[];
    };
    expect(status.attachments.map((a) => a.attachment_id)).toEqual([docJob.job_id, imageJob.job_id]);
    expect(status.attachments[0]).toMatchObject({ status: "completed", text_length: expect.any(Number) });
    expect(status.attachments[0].text_length).toBeGreaterThan(0);
  });

  it("keeps a document upload converting and loading, with no job", async () => {
    const before = (await read(JobListSchema, "/v1/jobs?compact=true")).total;
    const uploadId = await presign("notes.md", MD, "document");
    const res = await processUpload(uploadId, { session_id: "uj-doc", return_html: true });
    expect(res.status, await res.clone().text()).toBe(200);
    const body = (await res.json()) as { format: string; session_id: string; html: string; job_id?: string };
    expect(body).toMatchObject({ format: "md", session_id: "uj-doc" });
    expect(body.html).toContain("Body of the notes.");
    expect(body).not.toHaveProperty("job_id");
    expect((await read(JobListSchema, "/v1/jobs?compact=true")).total).toBe(before);
  });

  it("has ingest refuse to attach a slot of another purpose (400), so only attachment uploads become attachments", async () => {
    const files = createRpcClient(ingestFilesV1.FilesServiceService, stack.addrs.ingest);
    try {
      const { principal } = await stack.accounts.resolveApiKey({ apiKey: key });
      const uploadId = await presign("notes.md", MD, "document");
      const err = await files
        .createAttachment({ sessionId: "uj-att", filename: "", content: Buffer.alloc(0), uploadId }, { principal })
        .catch((e: unknown) => e);
      expect(err).toBeInstanceOf(RemoteError);
      expect((err as RemoteError).httpStatus).toBe(400);
      expect((err as RemoteError).detail).toMatch(/purpose document, not attachment/);
    } finally {
      files.close();
    }
  });

  it("answers 404 for an attachment upload never PUT, unknown or expired, and 415 for an unknown extension", async () => {
    const notPut = await presign("late.md", MD, "attachment", key, false);
    const res = await processUpload(notPut, { session_id: "uj-att" });
    expect(res.status).toBe(404);
    expect(((await res.json()) as { detail: string }).detail).toMatch(/PUT/);
    expect((await processUpload("upl_00000000000000000000000000000000", { session_id: "uj-att" })).status).toBe(404);

    const expired = await presign("old.md", MD, "attachment");
    await stack.documentsDb.raw("update ingest.uploads set expires_at = now() - interval '1 second' where id = ?", [
      expired,
    ]);
    expect((await processUpload(expired, { session_id: "uj-att" })).status).toBe(404);

    const exe = await presign("tool.exe", MD, "attachment");
    expect((await processUpload(exe, { session_id: "uj-att" })).status).toBe(415);
    const status = (await (await stack.call("GET", "/v1/attachments/status/uj-att", { key })).json()) as {
      attachments: unknown[];
    };
    expect(status.attachments).toHaveLength(2);
  });

  it("shows another owner none of it: no jobs, no upload, no session's jobs", async () => {
    expect(await read(JobListSchema, "/v1/jobs", otherKey)).toEqual({ jobs: [], total: 0 });
    for (const id of [docJob.job_id, imageJob.job_id])
      expect((await stack.call("GET", `/v1/jobs/${id}`, { key: otherKey })).status).toBe(404);
    // The session id names nothing of theirs.
    expect((await stack.call("GET", "/v1/sessions/uj-att/jobs", { key: otherKey })).status).toBe(404);
    // Another owner's upload is unknown to them: nothing is attached to their session.
    const mine = await presign("mine.md", MD, "attachment");
    expect((await processUpload(mine, { session_id: "uj-theirs" }, otherKey)).status).toBe(404);
    // Refused before the session is ensured: no session was minted for them either.
    expect((await stack.call("GET", "/v1/sessions/uj-theirs/jobs", { key: otherKey })).status).toBe(404);
    expect(await read(JobListSchema, "/v1/jobs", otherKey)).toEqual({ jobs: [], total: 0 });
  });
});
