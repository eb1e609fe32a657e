// Tracked changes out (issue #12): a session's document edited by the AI (offline engine) and
// saved by a person, exported with options.track_changes, carries the edits as Word revisions
// with their authors and dates. Checked with readers that are not ours: mammoth (shows
// insertions, drops deletions), the raw XML, and pandoc --track-changes=all when it is on PATH.
// Also: the 422s of the options, and tracked changes in an uploaded file still accepted on import.
import { execFileSync, spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { load } from "cheerio";
import JSZip from "jszip";
import mammoth from "mammoth";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startStackWithKey } from "./support/file-stack.js";
import { corpusFile } from "./support/fixtures.js";
import { postMultipart } from "./support/multipart.js";
import type { TestStack } from "./support/stack.js";

let stack: TestStack;
let key: string;

const USER = "Ada Lovelace";
const DOC =
  "<h1>Service Terms</h1><p>Payment is due in 30 days.</p><h2>Scope</h2><p>We build the bridge.</p><p>Support is included.</p>";

beforeAll(async () => {
  ({ stack, key } = await startStackWithKey({ name: "track-changes" }, USER));
});
afterAll(() => stack?.close());

async function json(method: string, path: string, body?: unknown) {
  const res = await stack.call(method, path, { key, body });
  const text = await res.text();
  // biome-ignore lint/suspicious/noExplicitAny: parsed JSON of the API under test
  return { status: res.status, body: (text ? JSON.parse(text) : {}) as Record<string, any> };
}

async function exportDocx(body: Record<string, unknown>) {
  const res = await stack.call("POST", "/v1/documents/export", { key, body });
  return { status: res.status, bytes: Buffer.from(await res.arrayBuffer()) };
}

/** A stored document (version 1 by the user), two AI turns, then a human save: versions 1..4. */
async function editedDocument() {
  const startedAt = Date.now();
  const init = await json("POST", "/v1/sessions/init", {});
  const sessionId = init.body.session_id as string;
  const blank = await json("POST", `/v1/sessions/${sessionId}/documents/blank`);
  const slot = blank.body.document.document_id as string;
  const created = await json("POST", `/v1/sessions/${sessionId}/documents/${slot}/save`, { html: DOC });
  expect(created.status).toBe(200);
  const replace = await json("POST", "/v1/chat", {
    session_id: sessionId,
    message: 'replace "30 days" with "45 days"',
  });
  expect(replace.status).toBe(200);
  expect(replace.body.document_changes?.chunk_diffs).toHaveLength(1);
  const del = await json("POST", "/v1/chat", {
    session_id: sessionId,
    message: 'delete the paragraph containing "bridge"',
  });
  expect(del.status).toBe(200);
  const html = del.body.document_changes?.updated_html as string;
  expect(html).not.toContain("bridge");
  const saved = await json("POST", `/v1/sessions/${sessionId}/documents/${slot}/save`, {
    html: `${html}\n<p>Added by hand.</p>`,
  });
  expect(saved.status).toBe(200);
  return { sessionId, documentId: created.body.durable_document_id as string, startedAt, endedAt: Date.now() };
}

/** Revisions in word/document.xml: kind, author, date and text. */
async function revisions(bytes: Buffer) {
  const zip = await JSZip.loadAsync(bytes);
  const xml = (await zip.file("word/document.xml")?.async("string")) ?? "";
  const $ = load(xml, { xml: true });
  const read = (tag: "ins" | "del") =>
    $(`w\\:${tag}`)
      .toArray()
      .map((el) => ({
        author: $(el).attr("w:author") ?? "",
        date: Date.parse($(el).attr("w:date") ?? ""),
        text: $(el)
          .find(tag === "ins" ? "w\\:t" : "w\\:delText")
          .text(),
        mark: $(el).parent().is("w\\:rPr"),
      }));
  const ids = $("w\\:ins, w\\:del")
    .toArray()
    .map((el) => $(el).attr("w:id"));
  return { ins: read("ins"), del: read("del"), ids };
}

describe("export with track_changes", () => {
  it("writes the AI's and the user's edits as revisions that independent readers show", async () => {
    const doc = await editedDocument();
    const out = await exportDocx({ session_id: doc.sessionId, format: "docx", options: { track_changes: true } });
    expect(out.status).toBe(200);

    // mammoth shows insertions and drops deletions: the accepted text.
    const text = (await mammoth.extractRawText({ buffer: out.bytes })).value;
    expect(text).toContain("Payment is due in 45 days.");
    expect(text).not.toContain("30 days");
    expect(text).not.toContain("bridge");
    expect(text).toContain("Added by hand.");
    expect(text).toContain("Support is included.");

    const rev = await revisions(out.bytes);
    expect(new Set(rev.ids).size).toBe(rev.ids.length);
    const ai = "Redline AI";
    expect(rev.del.find((d) => d.text === "30")?.author).toBe(ai);
    expect(rev.ins.find((d) => d.text === "45")?.author).toBe(ai);
    expect(rev.del.find((d) => d.text.includes("We build the bridge."))?.author).toBe(ai);
    const added = rev.ins.find((d) => d.text.includes("Added by hand."));
    expect(added?.author).toBe(USER);
    // The inserted paragraph's mark is an insertion too, by the same person.
    expect(rev.ins.some((d) => d.mark && d.author === USER)).toBe(true);
    for (const r of [...rev.ins, ...rev.del]) {
      expect(r.date).toBeGreaterThanOrEqual(Math.floor(doc.startedAt / 1000) * 1000);
      expect(r.date).toBeLessThanOrEqual(doc.endedAt);
    }
    // The human save came after the AI's turns.
    expect(added?.date).toBeGreaterThanOrEqual(Math.max(...rev.del.map((d) => d.date)));
    // Unchanged chunks carry no revision.
    expect([...rev.ins, ...rev.del].some((r) => r.text.includes("Support"))).toBe(false);

    const pandoc = spawnSync("pandoc", ["--version"]).status === 0;
    if (pandoc) {
      const dir = mkdtempSync(join(tmpdir(), "track-changes-"));
      try {
        writeFileSync(join(dir, "out.docx"), out.bytes);
        const html = execFileSync("pandoc", ["--track-changes=all", "-t", "html", join(dir, "out.docx")], {
          encoding: "utf8",
        });
        const $ = load(html);
        expect($('.deletion[data-author="Redline AI"]').text()).toContain("30");
        expect($('.insertion[data-author="Redline AI"]').text()).toContain("45");
        expect($(`.insertion[data-author="${USER}"]`).text()).toContain("Added by hand.");
        const rejected = execFileSync("pandoc", ["--track-changes=reject", "-t", "plain", join(dir, "out.docx")], {
          encoding: "utf8",
        });
        expect(rejected).toContain("30 days");
        expect(rejected).toContain("We build the bridge.");
        expect(rejected).not.toContain("Added by hand.");
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    }
  });

  it("counts from since_version: earlier edits are plain text", async () => {
    const doc = await editedDocument();
    // Version 3 is after both AI turns: only the human save is a revision.
    const out = await exportDocx({ session_id: doc.sessionId, options: { track_changes: true, since_version: 3 } });
    expect(out.status).toBe(200);
    const rev = await revisions(out.bytes);
    expect(rev.del).toEqual([]);
    expect(rev.ins.length).toBeGreaterThan(0);
    expect(rev.ins.every((r) => r.author === USER)).toBe(true);
    const text = (await mammoth.extractRawText({ buffer: out.bytes })).value;
    expect(text).toContain("45 days");
    // At head itself nothing is tracked.
    const none = await exportDocx({ session_id: doc.sessionId, options: { track_changes: true, since_version: 4 } });
    expect(none.status).toBe(200);
    expect((await revisions(none.bytes)).ids).toEqual([]);
  });

  it("counts by default from the version the document was loaded at from its original file", async () => {
    const init = await json("POST", "/v1/sessions/init", {});
    const sessionId = init.body.session_id as string;
    const blank = await json("POST", `/v1/sessions/${sessionId}/documents/blank`);
    const slot = blank.body.document.document_id as string;
    expect((await json("POST", `/v1/sessions/${sessionId}/documents/${slot}/save`, { html: DOC })).status).toBe(200);
    // Version 2: a Markdown file loaded over it (kept as the document's original).
    const markdown = "# Notes\n\nDelivery takes 10 days.\n\nNothing else changes.\n";
    const loaded = await postMultipart(stack, "/v1/documents/upload", key, {
      file: { bytes: Buffer.from(markdown, "utf8"), filename: "notes.md" },
      session_id: sessionId,
    });
    expect(loaded.status).toBe(200);
    const edit = await json("POST", "/v1/chat", { session_id: sessionId, message: 'replace "10 days" with "12 days"' });
    expect(edit.status).toBe(200);
    const out = await exportDocx({ session_id: sessionId, options: { track_changes: true } });
    expect(out.status).toBe(200);
    const rev = await revisions(out.bytes);
    // Only the AI's edit after the load is tracked, not the load replacing the first content.
    expect(rev.del.map((r) => [r.text, r.author])).toEqual([["10", "Redline AI"]]);
    expect(rev.ins.map((r) => [r.text, r.author])).toEqual([["12", "Redline AI"]]);
    const text = (await mammoth.extractRawText({ buffer: out.bytes })).value;
    expect(text).toContain("Delivery takes 12 days.");
    expect(text).not.toContain("Service Terms");
  });

  it("writes revisions into a loaded .docx written back in place, keeping its own styles", async () => {
    const upload = await postMultipart(stack, "/v1/documents/upload", key, {
      file: { bytes: corpusFile("docx/tika-testWORD_various.docx"), filename: "various.docx" },
      return_html: "true",
    });
    expect(upload.status).toBe(200);
    const loaded = (await upload.json()) as { session_id: string; document_id: string };
    const edit = await json("POST", "/v1/chat", {
      session_id: loaded.session_id,
      message: 'replace "Keyword2" with "Keyword3"',
    });
    expect(edit.status).toBe(200);
    expect(edit.body.document_changes?.chunk_diffs).toHaveLength(1);
    const out = await exportDocx({ session_id: loaded.session_id, options: { track_changes: true } });
    expect(out.status).toBe(200);
    const rev = await revisions(out.bytes);
    expect(rev.del.map((r) => [r.text, r.author])).toEqual([["Keyword2", "Redline AI"]]);
    expect(rev.ins.map((r) => [r.text, r.author])).toEqual([["Keyword3", "Redline AI"]]);
    const text = (await mammoth.extractRawText({ buffer: out.bytes })).value;
    expect(text).toContain("Keyword1 Keyword3");
    expect(text).not.toContain("Keyword2");
    // The original package came back (in place): its own styles part, not a generated one.
    const [original, exported] = await Promise.all([
      JSZip.loadAsync(corpusFile("docx/tika-testWORD_various.docx")),
      JSZip.loadAsync(out.bytes),
    ]);
    expect(await exported.file("word/styles.xml")?.async("string")).toBe(
      await original.file("word/styles.xml")?.async("string"),
    );
  });

  it("refuses bad since_version, other formats and sources without versions with a 422", async () => {
    const doc = await editedDocument();
    const cases: [Record<string, unknown>, string][] = [
      [{ session_id: doc.sessionId, options: { track_changes: true, since_version: 99 } }, "since_version"],
      [{ session_id: doc.sessionId, options: { track_changes: true, since_version: 0 } }, "since_version"],
      [{ session_id: doc.sessionId, format: "pdf", options: { track_changes: true } }, "track_changes"],
      [{ session_id: doc.sessionId, format: "markdown", options: { track_changes: true } }, "track_changes"],
      [{ html: "<p>x</p>", options: { track_changes: true } }, "track_changes"],
    ];
    for (const [body, field] of cases) {
      const res = await stack.call("POST", "/v1/documents/export", { key, body });
      const reply = (await res.json()) as { detail: { loc: string[]; msg: string; type: string }[] };
      expect(res.status, JSON.stringify(body)).toBe(422);
      expect(Array.isArray(reply.detail)).toBe(true);
      expect(reply.detail[0].loc).toEqual(["body", "options", field]);
      expect(reply.detail[0].msg.length).toBeGreaterThan(0);
    }
    // Without track_changes the same export is an ordinary one.
    const plain = await exportDocx({ session_id: doc.sessionId, options: { since_version: 99 } });
    expect(plain.status).toBe(200);
    expect((await revisions(plain.bytes)).ids).toEqual([]);
  });
});

describe("import of a file with tracked changes", () => {
  it("accepts them, as before: insertions kept, deletions gone", async () => {
    const res = await json("POST", "/v1/documents/upload-base64", {
      filename: "delins.docx",
      file_base64: corpusFile("docx/poi-delins-tracked-changes.docx").toString("base64"),
      return_html: true,
    });
    expect(res.status).toBe(200);
    const html = res.body.html as string;
    expect(html).toContain("March 2009: Apache Tika Release");
    expect(html).not.toContain("A pendant worn in place of the red spot");
  });
});
