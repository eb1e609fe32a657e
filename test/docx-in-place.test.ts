// Word files edited in place (issue #12), through the real stack: every .docx of the corpus that
// imports is uploaded, exported untouched (the upload itself comes back), edited by one AI edit
// (offline engine, `replace "…" with "…"` on a word only one paragraph has) and exported again.
// Every part of the package other than word/document.xml is byte-identical, and among the body's
// block-level children only the edited paragraph differs.
import { readdirSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CORPUS_DIR, readCorpus } from "./fixtures/corpus.js";
import { bodyBlocks, packageParts } from "./support/docx-parts.js";
import { startStackWithKey } from "./support/file-stack.js";
import { postMultipart } from "./support/multipart.js";
import type { TestStack } from "./support/stack.js";

let stack: TestStack;
let key: string;

beforeAll(async () => {
  ({ stack, key } = await startStackWithKey({ name: "docx-in-place" }, "wendy"));
});
afterAll(async () => {
  await stack?.close();
});

const FIXTURES = readdirSync(`${CORPUS_DIR}/docx`).filter((f) => f.endsWith(".docx"));

async function exportDocx(sessionId: string): Promise<Buffer> {
  return (await exportWithWarnings(sessionId)).bytes;
}

/** The export's bytes and its X-Export-Warnings (base64 of a JSON array, joined; empty when none). */
async function exportWithWarnings(sessionId: string): Promise<{ bytes: Buffer; warnings: string }> {
  const res = await stack.call("POST", "/v1/documents/export", {
    key,
    body: { session_id: sessionId, format: "docx" },
  });
  expect(res.status).toBe(200);
  const header = res.headers.get("x-export-warnings");
  const warnings = header ? (JSON.parse(Buffer.from(header, "base64").toString("utf8")) as string[]).join("\n") : "";
  return { bytes: Buffer.from(await res.arrayBuffer()), warnings };
}

const texts = (xml: string) => [...xml.matchAll(/<w:t\b[^>]*>([^<]*)<\/w:t>/g)].map((m) => m[1]).join(" ");

describe.each(FIXTURES)("%s", (name) => {
  it("comes back as uploaded when untouched, and with only the AI-edited paragraph changed after one edit", async () => {
    const bytes = readCorpus(`docx/${name}`);
    const res = await postMultipart(stack, "/v1/documents/upload", key, {
      file: { bytes, filename: name },
      return_html: "true",
    });
    if (res.status !== 200) {
      // Files the importer refuses (encrypted, truncated) are a 4xx with a reason, nothing to write back.
      expect(res.status).toBeGreaterThanOrEqual(400);
      expect(res.status).toBeLessThan(500);
      return;
    }
    const { session_id: sessionId, html } = (await res.json()) as { session_id: string; html: string };
    const untouched = await exportWithWarnings(sessionId);
    const uploaded = await packageParts(bytes);
    if (!untouched.bytes.equals(bytes)) {
      // Only a package that makes Word reach out is changed (issue #30): its unsafe links leave
      // the relationships and the part naming them, with a warning; nothing else moves.
      expect(untouched.warnings).toMatch(/Removed .* from the Word file/);
      const cleaned = await packageParts(untouched.bytes);
      const moved = [...uploaded.keys()].filter((n) => !cleaned.get(n)?.equals(uploaded.get(n) ?? Buffer.alloc(0)));
      expect(
        moved.every((n) => /^word\/(_rels\/)?[\w.-]+\.xml(\.rels)?$/.test(n)),
        moved.join(", "),
      ).toBe(true);
    }

    // A word of at least 5 letters that only one paragraph has, in the HTML and the cleaned XML.
    const original = await packageParts(untouched.bytes);
    const documentXml = original.get("word/document.xml")?.toString("utf8") ?? "";
    const blocks = bodyBlocks(documentXml);
    const paragraphs = [...html.matchAll(/<p data-chunk-id="[^"]+"(?: style="[^"]*")?>([^<]*)<\/p>/g)].map((m) => m[1]);
    // Block texts once: a slow search between two requests can outlast the server's keep-alive.
    const blockTexts = blocks.map(texts);
    const word = paragraphs
      .flatMap((p) => p.match(/\p{L}{5,}/gu) ?? [])
      .find(
        (w) =>
          /^[A-Za-z]+$/.test(w) && html.split(w).length === 2 && blockTexts.filter((t) => t.includes(w)).length === 1,
      );
    if (!word) return; // nothing uniquely editable in a plain paragraph (tables only)
    const chat = await stack.call("POST", "/v1/chat", {
      key,
      body: { session_id: sessionId, message: `replace "${word}" with "AIEDIT"` },
    });
    expect(chat.status).toBe(200);
    const reply = (await chat.json()) as { document_changes?: { chunk_diffs: unknown[] } };
    expect(reply.document_changes?.chunk_diffs).toHaveLength(1);

    const out = await packageParts(await exportDocx(sessionId));
    const changed = [...new Set([...original.keys(), ...out.keys()])].filter((n) => {
      const a = original.get(n);
      const b = out.get(n);
      return !a || !b || !a.equals(b);
    });
    expect(changed).toEqual(["word/document.xml"]);
    const after = bodyBlocks(out.get("word/document.xml")?.toString("utf8") ?? "");
    expect(after).toHaveLength(blocks.length);
    const differing = blocks.flatMap((b, i) => (b === after[i] ? [] : [i]));
    expect(differing).toHaveLength(1);
    expect(texts(blocks[differing[0]])).toContain(word);
    expect(texts(after[differing[0]])).toContain("AIEDIT");
    expect(texts(after[differing[0]])).not.toContain(word);
  });
});

describe("what an edit adds to a Word file written back in place", () => {
  // A 2 x 3 pixel PNG.
  const PNG = "iVBORw0KGgoAAAANSUhEUgAAAAIAAAADCAYAAAC56t6BAAAAEklEQVR4nGP4z8DAwMDAxAADAAnyAQWTYV1AAAAAAElFTkSuQmCC";

  it("a picture a save added is in the file; asked-for paper and margins reach every section; nothing else moves", async () => {
    const name = "tika-testWORD_various.docx";
    const bytes = readCorpus(`docx/${name}`);
    const res = await postMultipart(stack, "/v1/documents/upload", key, {
      file: { bytes, filename: name },
      return_html: "true",
    });
    expect(res.status).toBe(200);
    const up = (await res.json()) as { session_id: string; document_id: string; html: string };
    const first = /<p data-chunk-id="[^"]+">[\s\S]*?<\/p>/.exec(up.html)?.[0] ?? "";
    expect(first).not.toBe("");
    const added = `<p>Signed: <img src="data:image/png;base64,${PNG}" alt="signature"></p>`;
    const saved = await stack.call("POST", `/v1/sessions/${up.session_id}/documents/${up.document_id}/save`, {
      key,
      body: { html: up.html.replace(first, `${first}${added}`) },
    });
    expect(saved.status).toBe(200);

    const exported = await stack.call("POST", "/v1/documents/export", {
      key,
      body: {
        session_id: up.session_id,
        format: "docx",
        options: { paper_size: "A4", margins: "narrow" },
      },
    });
    expect(exported.status).toBe(200);
    const warnings = Buffer.from(exported.headers.get("x-export-warnings") ?? "W10=", "base64").toString("utf8");
    expect(JSON.parse(warnings)).toEqual([]);
    const original = await packageParts(bytes);
    const out = await packageParts(Buffer.from(await exported.arrayBuffer()));
    const changed = [...new Set([...original.keys(), ...out.keys()])].filter((n) => {
      const a = original.get(n);
      const b = out.get(n);
      return !a || !b || !a.equals(b);
    });
    const media = changed.filter((n) => n.startsWith("word/media/redline-"));
    expect(media).toHaveLength(1);
    expect(out.get(media[0])?.equals(Buffer.from(PNG, "base64"))).toBe(true);
    expect(changed.filter((n) => n !== media[0]).sort()).toEqual([
      "[Content_Types].xml",
      "word/_rels/document.xml.rels",
      "word/document.xml",
    ]);
    const xml = out.get("word/document.xml")?.toString("utf8") ?? "";
    const before = original.get("word/document.xml")?.toString("utf8") ?? "";
    const sections = (s: string) => s.match(/<w:sectPr\b[\s\S]*?<\/w:sectPr>/g) ?? [];
    expect(sections(xml)).toHaveLength(sections(before).length);
    for (const sect of sections(xml)) {
      expect(sect).toMatch(/<w:pgSz w:w="11906" w:h="16838"/);
      const pgMar = /<w:pgMar\b[^>]*>/.exec(sect)?.[0] ?? "";
      for (const side of ["top", "right", "bottom", "left"]) expect(pgMar).toContain(` w:${side}="720"`);
      expect(pgMar).toContain(' w:header="720"');
    }
    // Apart from the new paragraph and the sections' page, the body's blocks are the original's.
    const strip = (blocks: string[]) => blocks.map((b) => b.replace(/<w:sectPr\b[\s\S]*?<\/w:sectPr>/g, ""));
    const after = strip(bodyBlocks(xml));
    const extra = after.findIndex((b) => b.includes("<w:drawing>") && b.includes("Signed: "));
    expect(extra).toBeGreaterThan(0);
    expect(after.filter((_, i) => i !== extra)).toEqual(strip(bodyBlocks(before)));

    // A watermark goes into the original's headers, with nothing to warn about.
    const marked = await stack.call("POST", "/v1/documents/export", {
      key,
      body: { session_id: up.session_id, format: "docx", options: { watermark_text: "DRAFT" } },
    });
    expect(marked.status).toBe(200);
    const markedWarnings = Buffer.from(marked.headers.get("x-export-warnings") ?? "W10=", "base64").toString("utf8");
    expect(JSON.parse(markedWarnings)).toEqual([]);
    const markedParts = await packageParts(Buffer.from(await marked.arrayBuffer()));
    const headers = [...markedParts.keys()].filter((n) => /^word\/header[\w-]*\.xml$/.test(n));
    expect(headers.length).toBeGreaterThan(0);
    for (const name of headers) expect(markedParts.get(name)?.toString("utf8")).toContain('string="DRAFT"');

    // The picture reads back through the upload path as an image of the document.
    const back = await postMultipart(stack, "/v1/documents/upload", key, {
      file: {
        bytes: Buffer.from(
          await (
            await stack.call("POST", "/v1/documents/export", {
              key,
              body: { session_id: up.session_id, format: "docx" },
            })
          ).arrayBuffer(),
        ),
        filename: "back.docx",
      },
      return_html: "true",
    });
    expect(back.status).toBe(200);
    expect(((await back.json()) as { html: string }).html).toMatch(/Signed: <img [^>]*src="\/v1\/media\/[0-9a-f]{64}"/);
  });

  it("a note a save added is written into the notes part, and the exported file reads back with it", async () => {
    const name = "tika-testWORD_various.docx";
    const res = await postMultipart(stack, "/v1/documents/upload", key, {
      file: { bytes: readCorpus(`docx/${name}`), filename: name },
      return_html: "true",
    });
    expect(res.status).toBe(200);
    const up = (await res.json()) as { session_id: string; document_id: string; html: string };
    // The body paragraph that refers to note 2 gets a second reference, the notes list a second item.
    const html = up.html
      .replace(
        /(<sup><a href="#footnote-2" id="footnote-ref-2">\[1\]<\/a><\/sup>)/,
        '$1 and a source<sup><a href="#footnote-3" id="footnote-ref-3">[2]</a></sup>',
      )
      .replace(
        /(<li id="footnote-2">[\s\S]*?<\/li>)/,
        '$1<li id="footnote-3"><p>Smith v. Jones, 2024. <a href="#footnote-ref-3">↑</a></p></li>',
      );
    expect(html).toContain('<li id="footnote-3">');
    const saved = await stack.call("POST", `/v1/sessions/${up.session_id}/documents/${up.document_id}/save`, {
      key,
      body: { html },
    });
    expect(saved.status).toBe(200);

    const exported = await stack.call("POST", "/v1/documents/export", {
      key,
      body: { session_id: up.session_id, format: "docx" },
    });
    expect(exported.status).toBe(200);
    const warnings = Buffer.from(exported.headers.get("x-export-warnings") ?? "W10=", "base64").toString("utf8");
    expect(JSON.parse(warnings)).toEqual([]);
    const bytes = Buffer.from(await exported.arrayBuffer());
    const out = await packageParts(bytes);
    expect(out.get("word/footnotes.xml")?.toString("utf8")).toMatch(/<w:footnote w:id="3">[\s\S]*Smith v\. Jones/);
    expect(out.get("word/document.xml")?.toString("utf8")).toContain('<w:footnoteReference w:id="3"/>');

    const back = await postMultipart(stack, "/v1/documents/upload", key, {
      file: { bytes, filename: "back.docx" },
      return_html: "true",
    });
    expect(back.status).toBe(200);
    const read = ((await back.json()) as { html: string }).html;
    expect(read).toMatch(/and a source<sup><a href="#footnote-3" id="footnote-ref-3">\[2\]<\/a><\/sup>/);
    expect(read).toMatch(/<li id="footnote-3"><p>\s*Smith v\. Jones, 2024\./);
  });
});
