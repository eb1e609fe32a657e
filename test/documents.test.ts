// The Files view end to end (endpoints 3, 5, 6, 8): list with paging, previews and session
// counts, detail with structure and prior chats, rename and page setup, the legacy parts 400,
// and documents loaded through chat appearing in the list without any import step.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createSavedDocument, jsonCall } from "./support/documents-client.js";
import { startStackWithKey } from "./support/file-stack.js";
import { sampleContract } from "./support/fixtures.js";
import type { TestStack } from "./support/stack.js";

let stack: TestStack;
let key: string;

beforeAll(async () => {
  ({ stack, key } = await startStackWithKey({ name: "documents" }, "dora"));
});
afterAll(() => stack?.close());

const DOC =
  '<h1>Plan</h1><p>Intro <img src="data:image/png;base64,iVBORw0KGgo=" alt="x"></p>' +
  '<h2>Scope</h2><p>We build it.</p><pre class="mermaid">graph TD; A--&gt;B</pre><h2>Budget</h2><p>Ten.</p>';

describe("Files view", () => {
  it("lists saved and chat-loaded documents, newest first, with session counts and previews", async () => {
    const chat = await jsonCall(stack, "POST", "/v1/chat", key, {
      message: 'replace "Acme Corporation" with "Globex Inc"',
      document_html: sampleContract(),
    });
    expect(chat.status).toBe(200);
    const saved = await createSavedDocument(stack, key, DOC);

    const list = await jsonCall(stack, "GET", "/v1/documents?include_preview=true", key);
    expect(list.status).toBe(200);
    expect(list.body.total).toBe(2);
    expect(list.body.imported).toBe(0);
    const [first, second] = list.body.documents;
    expect(first.document_id).toBe(saved.documentId);
    expect(second.document_id).toBe(chat.body.document_changes.document_id);
    expect(first.session_count).toBe(1);
    expect(second.session_count).toBe(1);
    expect(first.preview_html).toContain("<h1");
    expect(first).not.toHaveProperty("html");

    const page = await jsonCall(stack, "GET", "/v1/documents?limit=1&offset=1", key);
    expect(page.body.documents.map((d: { document_id: string }) => d.document_id)).toEqual([second.document_id]);
    expect(page.body.documents[0]).not.toHaveProperty("preview_html");
  });

  it("answers 422 for limit or offset out of bounds", async () => {
    for (const q of ["limit=0", "limit=201", "offset=-1", "limit=abc", "include_preview=maybe"]) {
      const res = await jsonCall(stack, "GET", `/v1/documents?${q}`, key);
      expect(res.status, q).toBe(422);
      expect(Array.isArray(res.body.detail)).toBe(true);
    }
  });

  it("describes structure, media and prior chats; html only on request", async () => {
    const saved = await createSavedDocument(stack, key, DOC);
    const detail = await jsonCall(stack, "GET", `/v1/documents/${saved.documentId}`, key);
    expect(detail.status).toBe(200);
    expect(detail.body.structure.headings.map((h: { level: number; text: string }) => [h.level, h.text])).toEqual([
      [1, "Plan"],
      [2, "Scope"],
      [2, "Budget"],
    ]);
    expect(detail.body.structure.headings[1].position).toBe(2);
    expect(detail.body.structure.section_count).toBe(3);
    expect(detail.body.structure.block_count).toBe(7);
    expect(detail.body.structure.media).toEqual({ images: 1, diagrams: 1 });
    expect(detail.body.prior_chats).toEqual([
      expect.objectContaining({ session_id: saved.sessionId, document_id: saved.slotId }),
    ]);
    expect(detail.body).not.toHaveProperty("html");

    const full = await jsonCall(stack, "GET", `/v1/documents/${saved.documentId}?include_html=true`, key);
    expect(full.body.html).toBe(saved.html);
    expect(full.body.version_id).toBe(saved.versionId);
    expect(full.body.page_setup).toBeNull();

    const other = await stack.createKey("eve");
    const foreign = await jsonCall(stack, "GET", `/v1/documents/${saved.documentId}`, other);
    expect(foreign.status).toBe(404);
    expect(JSON.stringify(foreign.body)).not.toContain("Plan");
    expect((await jsonCall(stack, "GET", "/v1/documents/not-a-uuid", key)).status).toBe(404);
  });

  it("renames, sets page setup, and refuses a legacy parts payload with 400", async () => {
    const saved = await createSavedDocument(stack, key, DOC);
    const path = `/v1/documents/${saved.documentId}`;
    const renamed = await jsonCall(stack, "PATCH", path, key, { title: "Launch plan" });
    expect(renamed.status).toBe(200);
    expect(renamed.body.status).toBe("renamed");
    expect(renamed.body.document.title).toBe("Launch plan");

    const setup = { size: "A4", orientation: "landscape", margins: "narrow" };
    const updated = await jsonCall(stack, "PATCH", path, key, { page_setup: setup });
    expect(updated.body.status).toBe("updated");
    const detail = await jsonCall(stack, "GET", `${path}?include_html=true`, key);
    expect(detail.body.page_setup).toEqual(setup);
    expect(detail.body.title).toBe("Launch plan");

    const parts = await jsonCall(stack, "PATCH", path, key, { title: "X", parts: { footer: "<p>f</p>" } });
    expect(parts.status).toBe(400);
    expect(parts.body.code).toBe("parts_moved_to_chunks");
    expect((await jsonCall(stack, "GET", path, key)).body.title).toBe("Launch plan");

    expect((await jsonCall(stack, "PATCH", path, key, { title: "" })).status).toBe(422);
    expect((await jsonCall(stack, "PATCH", path, key, {})).status).toBe(400);
  });

  it("reads a page setup back byte for byte as stored, 422s unknown keys and clears with null", async () => {
    const saved = await createSavedDocument(stack, key, DOC);
    const path = `/v1/documents/${saved.documentId}`;
    const setup = {
      orientation: "portrait",
      margins: { right: 1.25, bottom: 1, left: 0.5, top: 1 },
      size: { height: 14, width: 8.5 },
    };
    expect((await jsonCall(stack, "PATCH", path, key, { page_setup: setup })).status).toBe(200);
    // The stored jsonb as Postgres returns it: what the HTTP body carried when it was a JSON string.
    const row = await stack.documentsDb("documents.documents").where({ id: saved.documentId }).first();
    const res = await stack.call("GET", `${path}?include_html=true`, { key });
    const text = await res.text();
    expect(text).toContain(`"page_setup":${JSON.stringify(row.page_setup)}`);
    expect(JSON.parse(text).page_setup).toEqual(setup);

    const unknown = await stack.call("PATCH", path, { key, body: { page_setup: { size: "A4", columns: 2 } } });
    expect(unknown.status).toBe(422);
    expect(JSON.stringify(await unknown.json())).toContain("columns");
    const partial = await jsonCall(stack, "PATCH", path, key, { page_setup: { margins: { top: 1 } } });
    expect(partial.status).toBe(422);

    expect((await jsonCall(stack, "PATCH", path, key, { page_setup: { size: "A4" } })).status).toBe(200);
    expect((await jsonCall(stack, "GET", `${path}?include_html=true`, key)).body.page_setup).toEqual({ size: "A4" });
    const cleared = await jsonCall(stack, "PATCH", path, key, { page_setup: null });
    expect(cleared.body.status).toBe("updated");
    expect((await jsonCall(stack, "GET", `${path}?include_html=true`, key)).body.page_setup).toBeNull();
  });

  it("keeps out-of-flow parts as chunks: sanitized on save and versioned with the document", async () => {
    const saved = await createSavedDocument(stack, key, "<h1>Letter</h1><p>Body.</p>");
    const withFooter = `${saved.html}\n<footer>Page footer <script>alert(1)</script></footer>`;
    const res = await jsonCall(stack, "POST", `/v1/sessions/${saved.sessionId}/documents/${saved.slotId}/save`, key, {
      html: withFooter,
    });
    expect(res.status).toBe(200);
    expect(res.body.html).toContain("Page footer");
    expect(res.body.html).not.toContain("<script");
    expect(res.body.changed_chunk_ids).toHaveLength(1);
    expect(res.body.version_id).not.toBe(saved.versionId);
  });
});
