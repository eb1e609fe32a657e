// Attachments and templates end to end (interface-spec endpoint 23; unshown-parts.md): uploads
// create att_ jobs processed in the background to completed (text length, chunk count) or failed
// (an actionable error); delete cancels or removes; templates are owner-scoped and soft-deleted.
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { corpusFile } from "./support/fixtures.js";
import { postMultipart } from "./support/multipart.js";
import { startTestStack, type TestStack } from "./support/stack.js";

interface AttachmentStatus {
  attachment_id: string;
  job_id: string;
  filename: string;
  status: string;
  kind: string;
  text_length: number | null;
  chunk_count: number | null;
  error?: string;
}

let stack: TestStack;
let key: string;
let otherKey: string;
let orgKeyA: string;
let orgKeyB: string;

beforeAll(async () => {
  stack = await startTestStack(inject("infra"), { name: "attachments" });
  [key, otherKey, orgKeyA, orgKeyB] = await Promise.all([
    stack.createKey("ada"),
    stack.createKey("bob"),
    stack.createKey("carol", { org: "acme" }),
    stack.createKey("dave", { org: "acme" }),
  ]);
});
afterAll(async () => {
  await stack?.close();
});

async function attachBase64(filename: string, bytes: Buffer, sessionId: string, k = key) {
  const res = await stack.call("POST", "/v1/attachments/upload-base64", {
    key: k,
    body: { filename, file_base64: bytes.toString("base64"), session_id: sessionId },
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

async function statusOf(sessionId: string, k = key) {
  const res = await stack.call("GET", `/v1/attachments/status/${sessionId}`, { key: k });
  return { status: res.status, body: (await res.json()) as { attachments: AttachmentStatus[]; total: number } };
}

/** Polls until every attachment of the session is completed or failed. */
async function settled(sessionId: string): Promise<AttachmentStatus[]> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const { body } = await statusOf(sessionId);
    if (body.attachments.every((a) => a.status === "completed" || a.status === "failed")) return body.attachments;
    if (Date.now() > deadline) throw new Error(`attachments not settled: ${JSON.stringify(body)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe("attachments", () => {
  it("processes documents and images to completed with text figures", async () => {
    const doc = await attachBase64("various.docx", corpusFile("docx/tika-testWORD_various.docx"), "att-1");
    expect(doc.status).toBe(200);
    expect(doc.body).toMatchObject({ status: "processing", filename: "various.docx", session_id: "att-1" });
    expect(String(doc.body.job_id)).toMatch(/^att_[0-9a-f]{32}$/);

    const multipart = await postMultipart(stack, "/v1/attachments/upload", key, {
      file: { bytes: corpusFile("pdf/tika-testPDFVarious.pdf"), filename: "various.pdf" },
      session_id: "att-1",
    });
    expect(multipart.status).toBe(200);

    // A 1x1 PNG.
    const png = Buffer.from(
      "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==",
      "base64",
    );
    expect((await attachBase64("dot.png", png, "att-1")).status).toBe(200);

    const done = await settled("att-1");
    expect(done).toHaveLength(3);
    for (const a of done) expect(a.status, a.filename).toBe("completed");
    const docx = done.find((a) => a.filename === "various.docx") as AttachmentStatus;
    expect(docx.text_length).toBeGreaterThan(300);
    expect(docx.chunk_count).toBeGreaterThan(10);
    const dot = done.find((a) => a.filename === "dot.png");
    expect(dot).toMatchObject({ kind: "image" });
    expect(dot).not.toHaveProperty("error");
  });

  it("answers the job endpoints for attachment_processing jobs, scoped to the owner", async () => {
    const created = await attachBase64("brief.md", Buffer.from("# Brief\n\nShip it on Friday."), "att-jobs");
    const jobId = String(created.body.job_id);
    await settled("att-jobs");
    const res = await stack.call("GET", `/v1/jobs/${jobId}`, { key });
    expect(res.status).toBe(200);
    const job = (await res.json()) as Record<string, unknown>;
    expect(job).toMatchObject({
      job_id: jobId,
      session_id: "att-jobs",
      job_type: "attachment_processing",
      status: "completed",
      progress: 100,
      result: { attachment_id: jobId, session_id: "att-jobs" },
      metadata: { filename: "brief.md" },
    });
    expect(job).not.toHaveProperty("error");
    const list = await stack.call("GET", "/v1/sessions/att-jobs/jobs", { key });
    const listed = (await list.json()) as { jobs: { job_id: string; job_type: string }[]; total: number };
    expect(listed.jobs.map((j) => [j.job_id, j.job_type])).toContainEqual([jobId, "attachment_processing"]);
    expect((await stack.call("GET", `/v1/jobs/${jobId}`, { key: otherKey })).status).toBe(404);
  });

  it("fails damaged files with an actionable error and refuses other types with 415", async () => {
    const bad = await attachBase64("locked.pdf", corpusFile("pdf/pdf2json-i43_err_encrypted.pdf"), "att-2");
    expect(bad.status).toBe(200);
    const [failed] = await settled("att-2");
    expect(failed.status).toBe("failed");
    expect(failed.error).toMatch(/password/i);
    expect(failed.text_length).toBeNull();

    const doc = await attachBase64("old.doc", corpusFile("doc/tika-testWORD_various.doc"), "att-2");
    expect(doc.status).toBe(415);
    expect(String(doc.body.detail)).toContain(".png");
  });

  it("deletes (cancels) an attachment; the status list drops it; unknown ids are 404", async () => {
    const created = await attachBase64("notes.md", Buffer.from("# Notes\n\nRemember the milk."), "att-3");
    const id = String(created.body.attachment_id);
    const del = await stack.call("DELETE", `/v1/attachments/${id}`, { key });
    expect(del.status).toBe(200);
    expect(await del.json()).toMatchObject({ attachment_id: id, deleted: true });
    expect((await statusOf("att-3")).body.attachments).toEqual([]);
    expect((await stack.call("DELETE", `/v1/attachments/${id}`, { key })).status).toBe(404);
  });

  it("lists the session's attachments in its history and restored document state", async () => {
    const created = await attachBase64("agenda.md", Buffer.from("# Agenda\n\nBudget first."), "att-history");
    expect(created.status).toBe(200);
    await settled("att-history");
    const res = await stack.call("GET", "/v1/sessions/att-history/history", { key });
    expect(res.status).toBe(200);
    const history = (await res.json()) as { attachments: AttachmentStatus[]; document_state: unknown };
    expect(history.attachments.map((a) => [a.attachment_id, a.filename, a.status])).toEqual([
      [created.body.attachment_id, "agenda.md", "completed"],
    ]);
    // Session ids are per owner: the other owner has no such session, so nothing of it shows.
    const theirs = await stack.call("GET", "/v1/sessions/att-history/history", { key: otherKey });
    expect(theirs.status).toBe(404);
  });

  it("keeps other owners out: the same session id is their own session, their attachment 404", async () => {
    const mine = await attachBase64("a.txt", Buffer.from("secret"), "att-private");
    expect((await statusOf("att-private", otherKey)).status).toBe(404);
    // Session ids are scoped per owner: the upload makes the other owner's own "att-private".
    expect((await attachBase64("b.txt", Buffer.from("x"), "att-private", otherKey)).status).toBeLessThan(300);
    const theirs = await statusOf("att-private", otherKey);
    expect(theirs.body.attachments.map((x) => x.filename)).toEqual(["b.txt"]);
    expect((await statusOf("att-private")).body.attachments.map((x) => x.filename)).toEqual(["a.txt"]);
    const del = await stack.call("DELETE", `/v1/attachments/${String(mine.body.attachment_id)}`, { key: otherKey });
    expect(del.status).toBe(404);
  });
});

describe("templates", () => {
  it("uploads, lists and soft-deletes, scoped to the organization", async () => {
    const up = await stack.call("POST", "/v1/templates/upload-base64", {
      key: orgKeyA,
      body: { filename: "NDA.md", file_base64: Buffer.from("# Mutual NDA\n\nThe parties agree.").toString("base64") },
    });
    expect(up.status).toBe(201);
    const tpl = (await up.json()) as { template_id: string; name: string; title: string; scope: string };
    expect(tpl).toMatchObject({ name: "NDA", title: "Mutual NDA", scope: "organization" });

    const listB = (await (await stack.call("GET", "/v1/templates", { key: orgKeyB })).json()) as {
      templates: { template_id: string }[];
      total: number;
    };
    expect(listB.templates.map((t) => t.template_id)).toContain(tpl.template_id);
    const listOther = (await (await stack.call("GET", "/v1/templates", { key: otherKey })).json()) as { total: number };
    expect(listOther.total).toBe(0);
    expect((await stack.call("DELETE", `/v1/templates/${tpl.template_id}`, { key: otherKey })).status).toBe(404);

    expect((await stack.call("DELETE", `/v1/templates/${tpl.template_id}`, { key: orgKeyB })).status).toBe(200);
    const after = (await (await stack.call("GET", "/v1/templates", { key: orgKeyA })).json()) as { total: number };
    expect(after.total).toBe(0);
    expect((await stack.call("DELETE", `/v1/templates/${tpl.template_id}`, { key: orgKeyA })).status).toBe(404);
  });

  it("refuses unsupported and unreadable templates (415, 400)", async () => {
    const doc = await stack.call("POST", "/v1/templates/upload-base64", {
      key,
      body: { filename: "x.doc", file_base64: Buffer.from("x").toString("base64") },
    });
    expect(doc.status).toBe(415);
    const broken = await stack.call("POST", "/v1/templates/upload-base64", {
      key,
      body: { filename: "x.docx", file_base64: Buffer.from("not a zip").toString("base64") },
    });
    expect(broken.status).toBe(400);
  });
});

describe("the agent uses attachments and templates (offline engine)", () => {
  async function chat(body: Record<string, unknown>) {
    const res = await stack.call("POST", "/v1/chat", { key, body });
    expect(res.status).toBe(200);
    return (await res.json()) as { response: string; document_changes?: { updated_html?: string } };
  }

  it("searches and quotes a completed attachment during a turn", async () => {
    await attachBase64(
      "pricing-notes.md",
      Buffer.from("# Pricing\n\nThe discount for annual plans is 15 percent.\n\nSupport hours are 9 to 5."),
      "att-chat",
    );
    await settled("att-chat");
    const found = await chat({ session_id: "att-chat", message: 'search attachments for "discount"' });
    expect(found.response).toContain("pricing-notes.md");
    expect(found.response).toContain("15 percent");
    expect(found.document_changes).toBeUndefined();

    const quoted = await chat({ session_id: "att-chat", message: 'quote attachment "pricing" about "support"' });
    expect(quoted.response).toContain("Support hours are 9 to 5");
    const none = await chat({ session_id: "att-chat", message: 'search attachments for "zeppelin"' });
    expect(none.response).toMatch(/No attachment/);
  });

  it("drafts a new document from a template", async () => {
    const up = await stack.call("POST", "/v1/templates/upload-base64", {
      key,
      body: {
        filename: "Consulting Agreement.md",
        file_base64: Buffer.from(
          "# Consulting Agreement\n\n## Scope\n\nThe consultant will advise.\n\n## Fees\n\n| Item | Fee |\n| --- | --- |\n| Day rate | $900 |",
        ).toString("base64"),
      },
    });
    expect(up.status).toBe(201);
    const drafted = await chat({ session_id: "tpl-chat", message: 'draft from template "consulting agreement"' });
    expect(drafted.response).toMatch(/Drafted a new document from the template/);
    expect(drafted.document_changes?.updated_html).toContain("Consulting Agreement");
    expect(drafted.document_changes?.updated_html).toMatch(/<table[\s\S]*Day rate/);
  });
});
