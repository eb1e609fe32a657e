// Chosen session ids are scoped per owner (interface-spec.md, Session; Authentication): two
// tenants that both pick "alpha" get two independent sessions. Neither sees the other's
// history, roster, jobs, attachments, doc-events or session list entry, a revert of one leaves
// the other alone, and nothing answers "in use by another account" (which would reveal the id).
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { type Body, jsonCall } from "./support/documents-client.js";
import { waitForJob } from "./support/jobs.js";
import { startTestStack, type TestStack } from "./support/stack.js";

let stack: TestStack;
let ann: string;
let ben: string;

beforeAll(async () => {
  stack = await startTestStack(inject("infra"), { name: "session_scope" });
  [ann, ben] = await Promise.all([stack.createKey("ann"), stack.createKey("ben")]);
});
afterAll(async () => {
  await stack?.close();
});

const chat = (key: string, body: Record<string, unknown>) => jsonCall(stack, "POST", "/v1/chat", key, body);

async function attachmentsOf(key: string, sid: string): Promise<{ status: number; body: Body }> {
  return jsonCall(stack, "GET", `/v1/attachments/status/${sid}`, key);
}

describe("session ids per owner", () => {
  it("lets two owners each use alpha, fully independent", async () => {
    const a1 = await chat(ann, {
      session_id: "alpha",
      message: 'replace "Ann" with "Anna"',
      document_html: "<h1>Ann's plan</h1><p>Ann writes.</p>",
    });
    expect(a1.status, JSON.stringify(a1.body)).toBe(200);
    const b1 = await chat(ben, {
      session_id: "alpha",
      message: 'replace "Ben" with "Benji"',
      document_html: "<h1>Ben's plan</h1><p>Ben writes.</p>",
    });
    expect(b1.status, JSON.stringify(b1.body)).toBe(200);
    expect(b1.body.session_id).toBe("alpha");
    const annDoc = a1.body.document_changes.document_id as string;
    const benDoc = b1.body.document_changes.document_id as string;
    expect(annDoc).not.toBe(benDoc);

    // History: each sees only its own turn and document.
    const ah = await jsonCall(stack, "GET", "/v1/sessions/alpha/history", ann);
    const bh = await jsonCall(stack, "GET", "/v1/sessions/alpha/history", ben);
    expect(ah.status).toBe(200);
    expect(ah.body.messages.map((m: Body) => m.content)[0]).toBe('replace "Ann" with "Anna"');
    expect(bh.body.messages.map((m: Body) => m.content)[0]).toBe('replace "Ben" with "Benji"');
    expect(JSON.stringify(ah.body)).not.toContain("Ben");
    expect(JSON.stringify(bh.body)).not.toContain("Ann");

    // Roster: one document each, their own.
    const ar = await jsonCall(stack, "GET", "/v1/sessions/alpha/documents", ann);
    const br = await jsonCall(stack, "GET", "/v1/sessions/alpha/documents", ben);
    expect(ar.body.documents.map((d: Body) => d.durable_document_id)).toEqual([annDoc]);
    expect(br.body.documents.map((d: Body) => d.durable_document_id)).toEqual([benDoc]);

    // Session list and prior chats: one alpha each, with its own message count.
    for (const [key, doc] of [
      [ann, annDoc],
      [ben, benDoc],
    ]) {
      const list = await jsonCall(stack, "GET", "/v1/sessions", key);
      const alphas = list.body.sessions.filter((s: Body) => s.session_id === "alpha");
      expect(alphas).toHaveLength(1);
      expect(alphas[0].message_count).toBe(2);
      const detail = await jsonCall(stack, "GET", `/v1/documents/${doc}`, key);
      expect(detail.body.prior_chats.map((c: Body) => c.session_id)).toEqual(["alpha"]);
    }

    // A second turn of each continues its own session on its own document.
    const a2 = await chat(ann, { session_id: "alpha", message: 'replace "writes" with "drafts"' });
    expect(a2.status).toBe(200);
    expect(a2.body.document_changes.document_id).toBe(annDoc);
    const bDetail = await jsonCall(stack, "GET", `/v1/documents/${benDoc}?include_html=true`, ben);
    expect(bDetail.body.html).toContain("Benji writes.");
    expect(bDetail.body.html).not.toContain("drafts");
  });

  it("keeps doc-events apart: another owner's alpha never shows, include_own is per owner", async () => {
    const a = await chat(ann, { session_id: "events", message: "hi", document_html: "<p>one</p>" });
    const b = await chat(ben, { session_id: "events", message: "hi", document_html: "<p>two</p>" });
    const annDoc = a.body.document_changes.document_id as string;
    const benDoc = b.body.document_changes.document_id as string;
    // Each saves its document from its own "events" session.
    for (const [key, html] of [
      [ann, "<p>one, saved</p>"],
      [ben, "<p>two, saved</p>"],
    ]) {
      const saved = await jsonCall(stack, "POST", "/v1/sessions/events/documents/primary/save", key, { html });
      expect(saved.status, JSON.stringify(saved.body)).toBe(200);
    }
    const annOwn = await jsonCall(stack, "GET", "/v1/sessions/events/doc-events?include_own=true", ann);
    expect(annOwn.status).toBe(200);
    expect(annOwn.body.events.length).toBeGreaterThan(0);
    expect(annOwn.body.events.every((e: Body) => e.document_id === annDoc)).toBe(true);
    // Ann's session "events" did not write Ben's save: without include_own it sees nothing.
    const annOthers = await jsonCall(stack, "GET", "/v1/sessions/events/doc-events", ann);
    expect(annOthers.body.events).toEqual([]);
    const benOwn = await jsonCall(stack, "GET", "/v1/sessions/events/doc-events?include_own=true", ben);
    expect(benOwn.body.events.every((e: Body) => e.document_id === benDoc)).toBe(true);
  });

  it("keeps jobs, attachments and revert apart", async () => {
    await chat(ann, { session_id: "beta", message: "hi", document_html: "<p>Ann text</p>" });
    await chat(ben, { session_id: "beta", message: "hi", document_html: "<p>Ben text</p>" });

    // Ben's job waits for approval on his beta: an open job on "beta".
    const job = await jsonCall(stack, "POST", "/v1/chat/async", ben, {
      session_id: "beta",
      message: 'replace "Ben" with "Benji"',
      approval_mode: "ask_every_time",
    });
    expect([200, 202]).toContain(job.status);
    await waitForJob(stack, ben, job.body.job_id, ["awaiting_approval"]);
    const annJobs = await jsonCall(stack, "GET", "/v1/sessions/beta/jobs", ann);
    expect(annJobs.status).toBe(200);
    expect(annJobs.body.jobs).toEqual([]);
    expect((await jsonCall(stack, "GET", `/v1/jobs/${job.body.job_id}`, ann)).status).toBe(404);

    // Attachments: Ben's upload to his beta is not in Ann's beta.
    const up = await jsonCall(stack, "POST", "/v1/attachments/upload-base64", ben, {
      filename: "notes.txt",
      file_base64: Buffer.from("Ben's private notes").toString("base64"),
      session_id: "beta",
    });
    expect(up.status, JSON.stringify(up.body)).toBeLessThan(300);
    expect((await attachmentsOf(ben, "beta")).body.attachments).toHaveLength(1);
    const annAtt = await attachmentsOf(ann, "beta");
    expect(annAtt.status).toBe(200);
    expect(annAtt.body.attachments).toEqual([]);

    // Revert: Ben's open job blocks his beta only; Ann's revert goes through and leaves Ben's turns.
    expect((await jsonCall(stack, "POST", "/v1/sessions/beta/revert", ben, { turn_index: 0 })).status).toBe(409);
    const rev = await jsonCall(stack, "POST", "/v1/sessions/beta/revert", ann, { turn_index: 0 });
    expect(rev.status, JSON.stringify(rev.body)).toBe(200);
    expect((await jsonCall(stack, "GET", "/v1/sessions/beta/history", ann)).body.messages).toEqual([]);
    expect((await jsonCall(stack, "GET", "/v1/sessions/beta/history", ben)).body.messages).toHaveLength(2);
  });

  it("creates the caller's own session on init and upload, and 404s where one must exist", async () => {
    await jsonCall(stack, "POST", "/v1/sessions/init", ann, { session_id: "gamma" });
    const init = await jsonCall(stack, "POST", "/v1/sessions/init", ben, { session_id: "gamma" });
    expect(init.status, JSON.stringify(init.body)).toBe(200);
    expect(init.body.session_id).toBe("gamma");
    // "delta" exists for Ann only: for Ben it is simply unknown.
    await jsonCall(stack, "POST", "/v1/sessions/init", ann, { session_id: "delta" });
    for (const path of [
      "/v1/sessions/delta/history",
      "/v1/sessions/delta/documents",
      "/v1/sessions/delta/doc-events",
    ]) {
      const res = await jsonCall(stack, "GET", path, ben);
      expect(res.status, path).toBe(404);
      expect(JSON.stringify(res.body)).not.toMatch(/another account|in use/);
    }
    expect((await jsonCall(stack, "POST", "/v1/sessions/delta/documents/blank", ben)).status).toBe(404);
  });
});
