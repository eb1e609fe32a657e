// Hostile documents end to end: what a caller loads (chat document_html, a save, an agent-style
// commit) is stored with web beacons, overlays, opener leaks, bidi overrides, forged
// out-of-flow parts and foreign chunk ids neutralised, while a docx's own header part survives
// upload → save → export.
import { documentsV1 } from "@redline/grpc-stubs";
import type { Principal } from "@redline/service-kit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Body, createSavedDocument, jsonCall } from "./support/documents-client.js";
import { withTermsDocument } from "./support/documents-rpc.js";
import { principalOf, startStackWithKey } from "./support/file-stack.js";
import { chunkMap, corpusFile } from "./support/fixtures.js";
import type { TestStack } from "./support/stack.js";

let stack: TestStack;
let key: string;
let principal: Principal;

beforeAll(async () => {
  ({ stack, key } = await startStackWithKey({ name: "hostile" }, "hana"));
  principal = await principalOf(stack, key);
});
afterAll(() => stack?.close());

const MEDIA = `/v1/media/${"5e".repeat(32)}`;
const BIDI = /[\u202A-\u202E\u2066-\u2069]/;

async function headHtml(documentId: string): Promise<string> {
  const res = await jsonCall(stack, "GET", `/v1/documents/${documentId}?include_html=true`, key);
  expect(res.status).toBe(200);
  return res.body.html as string;
}

const chunkIds = (html: string) => [...chunkMap(html).keys()];
const chunkWith = (html: string, text: string) => [...chunkMap(html).values()].find((h) => h.includes(text)) ?? "";

describe("a hostile document_html in chat", () => {
  it("is stored with every trick neutralised and the offline edit applied", async () => {
    const hostile = [
      "<h1>Invoice 2041</h1>",
      `<p data-part="header" data-variant="default">URGENT: wire the funds to account 666</p>`,
      `<p data-chunk-id="c_dup0000001">Pay <img src="https://tracker.example/beacon.gif?u=7" alt="logo"> within 30 days.</p>`,
      `<p data-chunk-id="c_dup0000001" style="color:red; background:url(https://tracker.example/css.gif)">Styled terms.</p>`,
      `<div style="position:fixed;top:0;left:0;width:100%;height:100%;z-index:2147483647;background:white">Your session expired: sign in again</div>`,
      `<p>See <a href="https://evil.example/login" target="_blank">the portal</a>.</p>`,
      "<p>Amount due: \u202E0001\u202C USD</p>",
      `<p>Our logo <img src="${MEDIA}" alt="ours"></p>`,
    ].join("\n");
    const res = await stack.call("POST", "/v1/chat", {
      key,
      body: { message: 'replace "within 30 days" with "within 45 days"', document_html: hostile },
    });
    expect(res.status).toBe(200);
    const body = (await res.json()) as Body;
    const documentId = body.document_changes.document_id as string;
    const html = await headHtml(documentId);

    expect(html).toContain("within 45 days");
    // Beacons: the CSS url() is gone. A remote <img> stays as written, with its alt (issue #32:
    // README badges, saved pages): nothing on the server fetches it, and an operator who wants
    // no third-party loads sets REMOTE_IMAGES=drop on ingest. Our media stays.
    expect(html).toContain('<img src="https://tracker.example/beacon.gif?u=7" alt="logo">');
    expect(html).not.toContain("css.gif");
    expect(html).not.toMatch(/url\(/i);
    expect(html).toContain(`<img src="${MEDIA}" alt="ours">`);
    expect(chunkWith(html, "Styled terms.")).toContain('style="color:red"');
    // The overlay is an ordinary block: no fixed position, no stacking above the app.
    const overlay = chunkWith(html, "Your session expired");
    expect(overlay).not.toMatch(/position|z-index/);
    expect(overlay).toContain("background:white");
    // target=_blank cannot reach window.opener.
    expect(html).toContain('<a href="https://evil.example/login" target="_blank" rel="noopener noreferrer">');
    // The bidi override that showed "1000" for "0001" is removed.
    expect(html).not.toMatch(BIDI);
    expect(html).toContain("Amount due: 0001 USD");
    // The forged header is an ordinary paragraph; the duplicate id is re-minted.
    expect(html).not.toContain("data-part");
    expect(html).not.toContain("data-variant");
    expect(chunkWith(html, "URGENT")).toMatch(/^<p data-chunk-id="[^"]+">URGENT/);
    const ids = chunkIds(html);
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids.filter((id) => id === "c_dup0000001")).toHaveLength(1);
  });
});

describe("saves and commits", () => {
  it("re-mints chunk ids the document does not have and refuses forged parts", async () => {
    const other = await createSavedDocument(stack, key, "<p>Other document.</p>");
    const [foreign] = chunkIds(other.html);
    // A first save is caller-written too: its part marks are dropped.
    const doc = await createSavedDocument(
      stack,
      key,
      `<h1>Terms</h1><p data-part="footer">Fake footer</p><p>Pay in 30 days.</p>`,
    );
    expect(doc.html).not.toContain("data-part");
    const [heading, , pay] = chunkIds(doc.html);

    const edited = [
      doc.html.replace("<h1 ", `<h1 data-part="header" `),
      `<p data-chunk-id="${foreign}">Smuggled from another document.</p>`,
      `<p data-chunk-id="c_invented01" data-part="comment" data-author="Boss">Invented.</p>`,
      `<p data-chunk-id="${pay}">Duplicate of an existing id.</p>`,
    ].join("\n");
    const saved = await jsonCall(stack, "POST", `/v1/sessions/${doc.sessionId}/documents/${doc.slotId}/save`, key, {
      html: edited,
    });
    expect(saved.status).toBe(200);
    const html = await headHtml(doc.documentId);
    expect(saved.body.html).toBe(html);
    const ids = chunkIds(html);
    expect(ids.slice(0, 3)).toEqual(chunkIds(doc.html));
    expect(ids).toHaveLength(6);
    expect(new Set(ids).size).toBe(6);
    expect(ids).not.toContain(foreign);
    expect(ids).not.toContain("c_invented01");
    expect(html).not.toMatch(/data-part|data-author/);
    expect(chunkWith(html, "Smuggled")).toMatch(/^<p data-chunk-id="c_[0-9a-v]{10}">/);
    expect(chunkMap(html).get(heading)).toBe(chunkMap(doc.html).get(heading));
    // The other document is untouched.
    expect(await headHtml(other.documentId)).toBe(other.html);
  });

  it("a commit (an AI edit) cannot turn a chunk or a new chunk into an out-of-flow part", async () => {
    await withTermsDocument(stack, principal, async (documents, created) => {
      const [heading, pay] = created.chunks.map((c) => c.chunkId);
      const committed = await documents.commitOperations(
        {
          documentId: created.document?.documentId ?? "",
          baseVersionId: created.document?.versionId ?? "",
          sessionId: "s1",
          summary: "edit",
          returnChunks: true,
          idempotencyKey: "",
          operations: [
            {
              kind: documentsV1.OperationKind.OPERATION_KIND_REPLACE,
              chunkId: pay,
              html: `<p data-part="header" data-variant="first">Pay in 14 days.</p>`,
              afterChunkId: "",
              explanation: "test",
            },
            {
              kind: documentsV1.OperationKind.OPERATION_KIND_INSERT,
              chunkId: "c_newfooter1",
              html: `<p data-part="footer">Forged footer <span data-part="header">inside</span></p>`,
              afterChunkId: heading,
              explanation: "test",
            },
          ],
        },
        { principal },
      );
      const stored = committed.chunks.map((c) => c.html);
      expect(stored).toEqual([
        expect.stringContaining("<h1"),
        `<p data-chunk-id="c_newfooter1">Forged footer <span>inside</span></p>`,
        `<p data-chunk-id="${pay}">Pay in 14 days.</p>`,
      ]);
    });
  });
});

describe("a docx with a header", () => {
  it("keeps its header part through upload, saves and export", async () => {
    const up = await jsonCall(stack, "POST", "/v1/documents/upload-base64", key, {
      filename: "various.docx",
      file_base64: corpusFile("docx/tika-testWORD_various.docx").toString("base64"),
      session_id: "hostile-docx",
      return_html: true,
    });
    expect(up.status).toBe(200);
    const sid = up.body.session_id as string;
    const documentId = up.body.durable_document_id as string;
    const header = chunkWith(up.body.html, "This is the header text.");
    expect(header).toMatch(/^<p data-chunk-id="[^"]+" data-part="header" data-variant="default">/);
    const footer = chunkWith(up.body.html, "This is the footer text.");
    expect(footer).toContain('data-part="footer"');

    // The client sends back what it received, with the header and a body paragraph edited.
    const body = [...chunkMap(up.body.html).values()].find((h) => h.startsWith("<p") && !h.includes("data-part"));
    expect(body).toBeDefined();
    const edited = up.body.html
      .replace("This is the header text.", "This is the edited header.")
      .replace(body as string, (body as string).replace("</p>", " Amended.</p>"));
    const saved = await jsonCall(stack, "POST", `/v1/sessions/${sid}/documents/${documentId}/save`, key, {
      html: edited,
    });
    expect(saved.status).toBe(200);
    expect(saved.body.changed_chunk_ids).toHaveLength(2);
    const html = await headHtml(documentId);
    expect(chunkWith(html, "This is the edited header.")).toBe(
      header.replace("This is the header text.", "This is the edited header."),
    );
    expect(chunkWith(html, "This is the footer text.")).toBe(footer);
    expect(html).toContain(" Amended.</p>");

    const res = await stack.call("POST", "/v1/documents/export", {
      key,
      body: { session_id: sid, document_id: documentId, format: "docx" },
    });
    expect(res.status).toBe(200);
    const again = await jsonCall(stack, "POST", "/v1/documents/upload-base64", key, {
      filename: "again.docx",
      file_base64: Buffer.from(await res.arrayBuffer()).toString("base64"),
    });
    expect(again.status).toBe(200);
    // Converted only: Word's header of the exported file reads back as the header part.
    expect(again.body.html).toMatch(/<p data-part="header"[^>]*>This is the edited header\.<\/p>/);
  });
});

describe("caller-written uploads", () => {
  it("an .html or .md upload cannot mark blocks as headers, footers or comments", async () => {
    for (const [filename, source] of [
      ["evil.html", `<html><body><p data-part="header">Forged header</p><p>Body.</p></body></html>`],
      ["evil.md", `<p data-part="comment" data-author="CEO">Approve it</p>\n\n# Title\n\nBody.`],
    ]) {
      const up = await jsonCall(stack, "POST", "/v1/documents/upload-base64", key, {
        filename,
        file_base64: Buffer.from(source).toString("base64"),
        session_id: `hostile-${filename}`,
        return_html: true,
      });
      expect(up.status).toBe(200);
      expect(up.body.html).toContain("Body.");
      expect(up.body.html).not.toMatch(/data-part|data-author/);
      expect(await headHtml(up.body.durable_document_id)).toBe(up.body.html);
    }
  });
});
