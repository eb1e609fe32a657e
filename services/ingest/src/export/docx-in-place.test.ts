import { readdirSync } from "node:fs";
import { chunkHtml } from "@redline/html-chunks";
import JSZip from "jszip";
import mammoth from "mammoth";
import { describe, expect, it } from "vitest";
import { convertDocx } from "../converters/docx.js";
import { bodyLayout } from "../docx/source-map.js";
import { DEFAULT_LIMITS, type PageSetup } from "../formats.js";
import type { DocumentSource } from "../sources/types.js";
import { corpusDir, readCorpus } from "../testing/corpus.js";
import { writeDocxInPlace } from "./docx-in-place.js";

interface Loaded {
  source: DocumentSource;
  chunks: { chunkId: string; html: string }[];
  pageSetup: PageSetup | null;
}

/** Converts a corpus .docx and builds the DocumentSource the documents service would hand over. */
async function load(name: string): Promise<Loaded> {
  const bytes = readCorpus(`docx/${name}`);
  const converted = await convertDocx(bytes, name, DEFAULT_LIMITS, { keepSource: true });
  if (!converted.source) throw new Error(`${name}: no source map`);
  const { chunks } = chunkHtml(converted.html);
  const loaded = Object.fromEntries(chunks.map((c) => [c.chunkId, c.html]));
  return {
    source: { format: "docx", bytes, map: converted.source.map, loaded },
    chunks,
    pageSetup: converted.pageSetup,
  };
}

/** The body's block-level children of a package's word/document.xml. */
async function blocksOf(zip: JSZip): Promise<string[]> {
  const xml = (await zip.file("word/document.xml")?.async("string")) ?? "";
  return bodyLayout(xml).blocks.map((b) => xml.slice(b.start, b.end));
}

/** Names of the parts whose bytes differ between two packages (or exist in only one). */
async function changedParts(a: JSZip, b: JSZip): Promise<string[]> {
  const names = new Set([...Object.keys(a.files), ...Object.keys(b.files)].filter((n) => !n.endsWith("/")));
  const out: string[] = [];
  for (const name of names) {
    const x = await a.file(name)?.async("nodebuffer");
    const y = await b.file(name)?.async("nodebuffer");
    if (!x || !y || !x.equals(y)) out.push(name);
  }
  return out.sort();
}

const html = (chunks: { html: string }[]) => chunks.map((c) => c.html).join("\n");
/** One AI-style edit: a word added inside the first text of the chunk. */
const addWord = (chunkHtmlText: string) => {
  const inWord = chunkHtmlText.replace(/>([^<]*?)(\p{L}{3,})/u, ">$1revised $2");
  return inWord !== chunkHtmlText ? inWord : chunkHtmlText.replace(/>([^<]+)</, ">revised $1<");
};

const corpus = readdirSync(`${corpusDir}/docx`).filter((f) => f.endsWith(".docx"));
// Corpus files with something the writer cleans (docx-package-links.ts), and the parts that cleaning rewrites.
const CLEANED: Record<string, string[]> = {
  // A hyperlink to file:///C:/data/test.png.
  "tika-testWORD_2006ml.docx": ["word/_rels/document.xml.rels", "word/document.xml"],
};

describe("docx written back in place", () => {
  for (const name of corpus) {
    it(`${name}: one edited paragraph changes only its block; every other part is byte-identical`, async () => {
      let doc: Loaded;
      try {
        doc = await load(name);
      } catch (err) {
        // Files the importer refuses (encrypted, truncated) have nothing to write back.
        expect((err as Error).name).toBe("InputError");
        return;
      }
      // Untouched: the package's parts come back byte for byte, but for what cleaning rewrites.
      const same = await writeDocxInPlace(html(doc.chunks), doc.source);
      const original = await JSZip.loadAsync(same.bytes);
      expect(await changedParts(await JSZip.loadAsync(doc.source.bytes), original)).toEqual(CLEANED[name] ?? []);
      if (!CLEANED[name]) expect(same.bytes.equals(doc.source.bytes)).toBe(true);
      const before = await blocksOf(original);

      const target =
        doc.chunks.find(
          (c) => doc.source.map.chunks[c.chunkId] && /^<(p|h[1-6])\b/.test(c.html) && addWord(c.html) !== c.html,
        ) ?? doc.chunks.find((c) => doc.source.map.chunks[c.chunkId] && addWord(c.html) !== c.html);
      if (!target) throw new Error(`${name}: no paragraph to edit`);
      const span = doc.source.map.chunks[target.chunkId];
      if (span.kind !== "block") throw new Error("docx spans are blocks");
      const edited = doc.chunks.map((c) => (c === target ? { ...c, html: addWord(c.html) } : c));
      const written = await writeDocxInPlace(html(edited), doc.source);
      const output = await JSZip.loadAsync(written.bytes);

      expect(await changedParts(original, output)).toEqual(["word/document.xml"]);
      const after = await blocksOf(output);
      expect(after).toHaveLength(before.length);
      const differing = before.flatMap((b, i) => (b === after[i] ? [] : [i]));
      expect(differing).toEqual([span.index]);
      // The paragraph keeps its properties (style, numbering, section break).
      const pPr = (xml: string) => /^<w:p\b[^>]*>(<w:pPr>[\s\S]*?<\/w:pPr>)?/.exec(xml)?.[1] ?? "";
      if (after[span.index].startsWith("<w:p"))
        expect(pPr(after[span.index])).toBe(
          pPr(before[span.index]).replace(/<w:pPrChange\b[\s\S]*?<\/w:pPrChange>/g, ""),
        );
      expect(after[span.index]).toContain("revised ");
      // The output map names the edited block, and the package reads back with the edit.
      expect(written.map.chunks[target.chunkId]).toEqual({ kind: "block", index: span.index });
      const back = await convertDocx(written.bytes, name, DEFAULT_LIMITS, { keepSource: true });
      expect(back.html).toContain("revised ");
    }, 120_000);
  }

  it("keeps every section break when every chunk is deleted, and drops the deleted text", async () => {
    const doc = await load("poi-bug65649-large-procurement-tables.docx");
    const original = (await (await JSZip.loadAsync(doc.source.bytes)).file("word/document.xml")?.async("string")) ?? "";
    const kept = doc.chunks.filter((c) => !doc.source.map.chunks[c.chunkId]);
    const written = await writeDocxInPlace(html(kept), doc.source);
    const xml = (await (await JSZip.loadAsync(written.bytes)).file("word/document.xml")?.async("string")) ?? "";
    const sections = (x: string) => x.match(/<w:sectPr\b[\s\S]*?<\/w:sectPr>/g) ?? [];
    expect(sections(original)).toHaveLength(15);
    expect(sections(xml)).toEqual(sections(original));
    expect(xml.length).toBeLessThan(original.length / 4);
    expect(written.map.chunks).toEqual({});
  }, 120_000);

  it("keeps an edited paragraph's comment anchors around the same words", async () => {
    const doc = await load("pydocx-comments-rich-para.docx");
    const before = await blocksOf(await JSZip.loadAsync(doc.source.bytes));
    const anchored = doc.chunks.find((c) => {
      const span = doc.source.map.chunks[c.chunkId];
      return span?.kind === "block" && /<w:commentRangeStart\b/.test(before[span.index]);
    });
    if (!anchored) throw new Error("no commented paragraph");
    const span = doc.source.map.chunks[anchored.chunkId] as { index: number };
    const edited = anchored.html.replace(/(<\/[a-z]+>)$/, " and more words$1");
    const written = await writeDocxInPlace(
      html(doc.chunks.map((c) => (c === anchored ? { ...c, html: edited } : c))),
      doc.source,
    );
    const after = await blocksOf(await JSZip.loadAsync(written.bytes));
    const ids = (xml: string, el: string) =>
      [...xml.matchAll(new RegExp(`<w:${el}\\b[^>]*w:id="(\\d+)"`, "g"))].map((m) => m[1]);
    for (const el of ["commentRangeStart", "commentRangeEnd", "commentReference"]) {
      expect(ids(after[span.index], el)).toEqual(ids(before[span.index], el));
    }
    // The commented text is still between its range start and end.
    const text = (xml: string) => [...xml.matchAll(/<w:t\b[^>]*>([^<]*)<\/w:t>/g)].map((m) => m[1]).join("");
    const between = (xml: string) =>
      text(/<w:commentRangeStart\b[^>]*\/>([\s\S]*?)<w:commentRangeEnd\b/.exec(xml)?.[1] ?? "");
    expect(between(after[span.index])).toBe(between(before[span.index]));
    expect(text(after[span.index])).toContain("and more words");
  });

  it("regenerates only the header part whose chunk changed", async () => {
    const doc = await load("poi-DiffFirstPageHeadFoot.docx");
    const header = doc.chunks.find((c) => /data-part="header"/.test(c.html));
    if (!header) throw new Error("no header chunk");
    const edited = header.html.replace(/>([^<]+)</, ">New header text<");
    const written = await writeDocxInPlace(
      html(doc.chunks.map((c) => (c === header ? { ...c, html: edited } : c))),
      doc.source,
    );
    const output = await JSZip.loadAsync(written.bytes);
    const changed = await changedParts(await JSZip.loadAsync(doc.source.bytes), output);
    expect(changed).toHaveLength(1);
    expect(changed[0]).toMatch(/^word\/header\d*\.xml$/);
    expect(await output.file(changed[0])?.async("string")).toContain("New header text");
    const back = await convertDocx(written.bytes, "back.docx", DEFAULT_LIMITS, { keepSource: true });
    expect(back.html).toContain("New header text");
  });

  it("writes a new chunk as new blocks, with its formatting and a link relationship", async () => {
    const doc = await load("tika-testWORD_various.docx");
    const inFlow = doc.chunks.filter((c) => doc.source.map.chunks[c.chunkId]);
    const after = inFlow[2];
    const added =
      '<p data-chunk-id="c_newchunk01">A <strong>bold</strong> and <a href="https://example.org/x?a=1&amp;b=2">linked</a> line</p>';
    const chunks = doc.chunks.flatMap((c) => (c === after ? [c, { chunkId: "c_newchunk01", html: added }] : [c]));
    const written = await writeDocxInPlace(html(chunks), doc.source);
    const output = await JSZip.loadAsync(written.bytes);
    const before = await blocksOf(await JSZip.loadAsync(doc.source.bytes));
    const blocks = await blocksOf(output);
    expect(blocks).toHaveLength(before.length + 1);
    const at = written.map.chunks.c_newchunk01;
    expect(at?.kind).toBe("block");
    const block = blocks[(at as { index: number }).index];
    expect(block).toMatch(/<w:b\/><\/w:rPr><w:t xml:space="preserve">bold<\/w:t>/);
    const rid = /<w:hyperlink r:id="([^"]+)">/.exec(block)?.[1];
    const rels = (await output.file("word/_rels/document.xml.rels")?.async("string")) ?? "";
    expect(rels).toContain(`Id="${rid}"`);
    expect(rels).toContain('Target="https://example.org/x?a=1&amp;b=2" TargetMode="External"');
    // Every block but the new one is the original, in order.
    expect(blocks.filter((_, i) => i !== (at as { index: number }).index)).toEqual(before);
    const back = await convertDocx(written.bytes, "back.docx", DEFAULT_LIMITS, { keepSource: true });
    expect(back.html).toContain('<a href="https://example.org/x?a=1&amp;b=2">linked</a>');
  });

  it("rewrites only the edited cell of a table", async () => {
    const doc = await load("poi-IllustrativeCases-budget-tables.docx");
    const table = doc.chunks.find((c) => c.html.startsWith("<table") && doc.source.map.chunks[c.chunkId]);
    if (!table) throw new Error("no table");
    const edited = table.html.replace(/<td([^>]*)><p([^>]*)>([^<]+)<\/p>/, "<td$1><p$2>Changed cell</p>");
    expect(edited).not.toBe(table.html);
    const span = doc.source.map.chunks[table.chunkId] as { index: number };
    const written = await writeDocxInPlace(
      html(doc.chunks.map((c) => (c === table ? { ...c, html: edited } : c))),
      doc.source,
    );
    const before = await blocksOf(await JSZip.loadAsync(doc.source.bytes));
    const after = await blocksOf(await JSZip.loadAsync(written.bytes));
    const cells = (xml: string) => xml.match(/<w:tc>[\s\S]*?<\/w:tc>/g) ?? [];
    const a = cells(before[span.index]);
    const b = cells(after[span.index]);
    expect(b).toHaveLength(a.length);
    expect(a.flatMap((cell, i) => (cell === b[i] ? [] : [i]))).toHaveLength(1);
    expect(after[span.index]).toContain("Changed cell");
  });

  it("an edited list item changes only its own paragraph; the other items stay byte for byte", async () => {
    const doc = await load("tika-testWORD_various.docx");
    const list = doc.chunks.find((c) => c.html.startsWith("<ul") && c.html.includes("Bullet 2"));
    if (!list) throw new Error("no bullet list");
    const span = doc.source.map.chunks[list.chunkId] as { index: number; count: number };
    expect(span.count).toBe(3);
    const edited = list.html.replace("Bullet 2", "Bullet two, revised");
    const written = await writeDocxInPlace(
      html(doc.chunks.map((c) => (c === list ? { ...c, html: edited } : c))),
      doc.source,
    );
    const before = await blocksOf(await JSZip.loadAsync(doc.source.bytes));
    const after = await blocksOf(await JSZip.loadAsync(written.bytes));
    expect(after).toHaveLength(before.length);
    expect(before.flatMap((b, i) => (b === after[i] ? [] : [i]))).toEqual([span.index + 1]);
    // The item keeps its numbering (w:numPr) and reads back as the same list.
    expect(after[span.index + 1]).toMatch(/<w:numPr>/);
    const back = await convertDocx(written.bytes, "back.docx", DEFAULT_LIMITS, { keepSource: true });
    expect(back.html).toMatch(/<li>Bullet 1<\/li><li>Bullet two, revised<\/li><li>Bullet 3<\/li>/);
  });

  it("an edited text box paragraph (no block of its own) is written into the text box", async () => {
    const doc = await load("tika-testWORD_various.docx");
    const box = doc.chunks.find((c) => c.html.includes("Here is a text box"));
    if (!box) throw new Error("no text box chunk");
    expect(doc.source.map.chunks[box.chunkId]).toBeUndefined();
    const edited = box.html.replace("Here is a text box", "Here is an edited text box");
    const written = await writeDocxInPlace(
      html(doc.chunks.map((c) => (c === box ? { ...c, html: edited } : c))),
      doc.source,
    );
    expect(written.warnings).toEqual([]);
    const before = await blocksOf(await JSZip.loadAsync(doc.source.bytes));
    const after = await blocksOf(await JSZip.loadAsync(written.bytes));
    const differing = before.flatMap((b, i) => (b === after[i] ? [] : [i]));
    expect(differing).toHaveLength(1);
    expect(after[differing[0]]).toContain("Here is an edited text box");
    expect(after[differing[0]]).toContain("<w:txbxContent>");
  });
  it("writes an edited footnote into the notes part, keeping its number mark; nothing else changes", async () => {
    const doc = await load("tika-testWORD_various.docx");
    const notes = doc.chunks.find((c) => /data-part="footnote"/.test(c.html));
    if (!notes) throw new Error("no notes list");
    expect(notes.html).toContain("This is a footnote.");
    const edited = notes.html.replace("This is a footnote.", "This is an <em>edited</em> footnote.");
    const written = await writeDocxInPlace(
      html(doc.chunks.map((c) => (c === notes ? { ...c, html: edited } : c))),
      doc.source,
    );
    expect(written.warnings).toEqual([]);
    const original = await JSZip.loadAsync(doc.source.bytes);
    const output = await JSZip.loadAsync(written.bytes);
    expect(await changedParts(original, output)).toEqual(["word/footnotes.xml"]);
    const xml = (await output.file("word/footnotes.xml")?.async("string")) ?? "";
    const note = /<w:footnote\b[^>]*w:id="2"[\s\S]*?<\/w:footnote>/.exec(xml)?.[0] ?? "";
    expect(note).toContain("<w:footnoteRef/>");
    expect(note.indexOf("<w:footnoteRef/>")).toBeLessThan(note.indexOf("This is an "));
    expect(note).toMatch(/<w:i\/><\/w:rPr><w:t xml:space="preserve">edited<\/w:t>/);
    // The separators (ids 0 and 1) are as they were.
    const before = (await original.file("word/footnotes.xml")?.async("string")) ?? "";
    const separators = (x: string) => x.slice(0, x.search(/<w:footnote\b[^>]*w:id="2"/));
    expect(separators(xml)).toBe(separators(before));
    const read = await mammoth.convertToHtml({ buffer: written.bytes });
    expect(read.value).toMatch(/<li id="footnote-2"><p>\s*This is an <em>edited<\/em> footnote\./);
  });

  /** The various.docx chunks with `edit` applied to its body paragraph holding note 2's reference and to its notes list. */
  async function withNoteEdit(edit: { body?: (h: string) => string; notes?: (h: string) => string }) {
    const doc = await load("tika-testWORD_various.docx");
    const body = doc.chunks.find((c) => c.html.includes('id="footnote-ref-2"'));
    const notes = doc.chunks.find((c) => /data-part="footnote"/.test(c.html));
    if (!body || !notes) throw new Error("no note reference or notes list");
    const written = await writeDocxInPlace(
      html(
        doc.chunks.map((c) =>
          c === body && edit.body
            ? { ...c, html: edit.body(c.html) }
            : c === notes && edit.notes
              ? { ...c, html: edit.notes(c.html) }
              : c,
        ),
      ),
      doc.source,
    );
    const original = await JSZip.loadAsync(doc.source.bytes);
    const output = await JSZip.loadAsync(written.bytes);
    const part = async (zip: JSZip, name: string) => (await zip.file(name)?.async("string")) ?? "";
    return {
      written,
      changed: await changedParts(original, output),
      notesBefore: await part(original, "word/footnotes.xml"),
      notesAfter: await part(output, "word/footnotes.xml"),
      documentAfter: await part(output, "word/document.xml"),
      readBack: (await mammoth.convertToHtml({ buffer: written.bytes })).value,
    };
  }
  const noteOf = (xml: string, id: string) =>
    new RegExp(`<w:footnote\\b[^>]*w:id="${id}"[\\s\\S]*?<\\/w:footnote>`).exec(xml)?.[0];
  const addRef = (id: string) => (h: string) =>
    h.replace(/<\/p>$/, ` and here<sup><a href="#footnote-${id}" id="footnote-ref-${id}">[2]</a></sup></p>`);
  const addItem = (id: string, text: string) => (h: string) =>
    h.replace(/<\/ol>$/, `<li id="footnote-${id}"><p>${text} <a href="#footnote-ref-${id}">↑</a></p></li></ol>`);

  it("writes a note added in an edit into the notes part, shaped like the file's notes, and Word's reader finds it", async () => {
    const r = await withNoteEdit({ body: addRef("3"), notes: addItem("3", "A <em>second</em> note.") });
    expect(r.written.warnings).toEqual([]);
    expect(r.changed).toEqual(["word/document.xml", "word/footnotes.xml"]);
    const added = noteOf(r.notesAfter, "3") ?? "";
    expect(added).toContain("<w:footnoteRef/>");
    expect(added.indexOf("<w:footnoteRef/>")).toBeLessThan(added.indexOf("A "));
    expect(added).toMatch(/<w:i\/><\/w:rPr><w:t xml:space="preserve">second<\/w:t>/);
    // The number mark's run and the paragraph properties are note 2's own.
    const markRun = (note: string) => /<w:r>(?:(?!<w:r>)[\s\S])*?<w:footnoteRef\/><\/w:r>/.exec(note)?.[0];
    const pPr = (note: string) => /<w:pPr>[\s\S]*?<\/w:pPr>/.exec(note)?.[0];
    const existing = noteOf(r.notesAfter, "2") ?? "";
    expect(markRun(added)).toBe(markRun(existing));
    expect(pPr(added)).toBe(pPr(existing));
    // Note 2 and the separators are as they were.
    expect(existing).toBe(noteOf(r.notesBefore, "2"));
    expect(r.documentAfter).toContain('<w:footnoteReference w:id="3"/>');
    expect(r.readBack).toMatch(/and here<sup><a href="#footnote-3" id="footnote-ref-3">\[2\]<\/a><\/sup>/);
    expect(r.readBack).toMatch(/<li id="footnote-3"><p>\s*A <em>second<\/em> note\./);
  });

  it("gives an added note whose id Word cannot use (not a number, or taken) the next free id, reference included", async () => {
    // "1" is the continuation separator's id in this file.
    for (const id of ["new-1", "1"]) {
      const r = await withNoteEdit({ body: addRef(id), notes: addItem(id, "Renumbered note.") });
      expect(r.written.warnings).toEqual([]);
      expect(noteOf(r.notesAfter, "3")).toContain("Renumbered note.");
      expect(r.documentAfter).toContain('<w:footnoteReference w:id="3"/>');
      expect(r.documentAfter).not.toContain(`<w:footnoteReference w:id="${id}"/>`);
      expect(noteOf(r.notesAfter, "1")).toBe(noteOf(r.notesBefore, "1"));
      expect(r.readBack).toMatch(/<li id="footnote-3"><p>\s*Renumbered note\./);
    }
  });

  it("removes a note from the notes part once its reference and its item are gone; keeps it while referred to", async () => {
    const dropRef = (h: string) => h.replace(/<sup><a href="#footnote-2"[^>]*>\[1\]<\/a><\/sup>/, "");
    const dropItem = (h: string) => h.replace(/<li id="footnote-2">[\s\S]*?<\/li>/, "");
    const gone = await withNoteEdit({ body: dropRef, notes: dropItem });
    expect(gone.written.warnings).toEqual([]);
    expect(noteOf(gone.notesAfter, "2")).toBeUndefined();
    const separators = (x: string) => x.slice(0, x.search(/<w:footnote\b[^>]*w:id="2"/));
    expect(gone.notesAfter).toBe(`${separators(gone.notesBefore)}</w:footnotes>`);
    expect(gone.documentAfter).not.toContain("<w:footnoteReference");
    expect(gone.readBack).not.toContain("footnote-2");

    // The item removed while the body still refers to the note: Word needs the note, so it stays.
    const kept = await withNoteEdit({ notes: dropItem });
    expect(kept.written.warnings).toHaveLength(1);
    expect(noteOf(kept.notesAfter, "2")).toBe(noteOf(kept.notesBefore, "2"));
  });

  it("leaves out a reference an edit added to a note the file does not hold, so Word still opens it", async () => {
    // 9 is no note of the file; 0 is its separator, which no reference may name.
    const r = await withNoteEdit({ body: (h) => addRef("0")(addRef("9")(h)) });
    expect(r.written.warnings).toEqual([
      "2 note references added in an edit name no note of the file and were left out",
    ]);
    expect(r.documentAfter).not.toContain('<w:footnoteReference w:id="9"/>');
    expect(r.documentAfter).not.toContain('<w:footnoteReference w:id="0"/>');
    expect(r.documentAfter).toContain('<w:footnoteReference w:id="2"/>');
    expect(r.documentAfter).toContain("and here");
    expect(r.readBack).not.toContain("footnote-9");
  });

  it("reads note ids as text: an item id with quotes and brackets is a note it cannot place, not a failure", async () => {
    const doc = await load("tika-testWORD_various.docx");
    const notes = doc.chunks.find((c) => /data-part="footnote"/.test(c.html));
    if (!notes) throw new Error("no notes list");
    const edited = notes.html
      .replace("This is a footnote.", "This is an edited footnote.")
      .replace(/<\/ol>$/, '<li id="footnote-9&quot;]"><p>Odd <a href="#footnote-ref-9&quot;]">↑</a></p></li></ol>');
    const written = await writeDocxInPlace(
      html(doc.chunks.map((c) => (c === notes ? { ...c, html: edited } : c))),
      doc.source,
    );
    expect(written.warnings).toEqual([
      "1 edited passages (text boxes, notes) could not be written into the original file and keep their original text",
    ]);
    const xml = (await (await JSZip.loadAsync(written.bytes)).file("word/footnotes.xml")?.async("string")) ?? "";
    expect(xml).toContain("This is an edited footnote.");
  });

  it("puts a watermark first in every header a section references; a document without headers gets one", async () => {
    const withHeaders = await load("poi-DiffFirstPageHeadFoot.docx");
    const written = await writeDocxInPlace(html(withHeaders.chunks), withHeaders.source, {
      watermark: { text: "DRAFT & co", opacity: 0.4 },
    });
    const original = await JSZip.loadAsync(withHeaders.source.bytes);
    const output = await JSZip.loadAsync(written.bytes);
    // Both headers (default and first page) gain the shape; nothing else changes.
    const changed = await changedParts(original, output);
    expect(changed).toHaveLength(2);
    for (const name of changed) {
      expect(name).toMatch(/^word\/header\d*\.xml$/);
      const xml = (await output.file(name)?.async("string")) ?? "";
      expect(xml).toMatch(/<w:hdr\b[^>]*><w:p><w:r><w:pict>/);
      expect(xml).toContain('string="DRAFT &amp; co"');
      expect(xml).toContain('<v:fill opacity="0.4"/>');
      expect(xml).toMatch(/<w:hdr\b[^>]*\sxmlns:v="urn:schemas-microsoft-com:vml"/);
    }

    const plain = await load("pydocx-comments-rich-para.docx");
    const marked = await writeDocxInPlace(html(plain.chunks), plain.source, {
      watermark: { text: "CONFIDENTIAL", opacity: 0.3 },
    });
    const before = await JSZip.loadAsync(plain.source.bytes);
    const after = await JSZip.loadAsync(marked.bytes);
    expect(await changedParts(before, after)).toEqual([
      "[Content_Types].xml",
      "word/_rels/document.xml.rels",
      "word/document.xml",
      "word/header-redline-watermark.xml",
    ]);
    const header = (await after.file("word/header-redline-watermark.xml")?.async("string")) ?? "";
    expect(header).toContain('string="CONFIDENTIAL"');
    const rels = (await after.file("word/_rels/document.xml.rels")?.async("string")) ?? "";
    const rid = /Id="([^"]+)" Type="[^"]*\/header" Target="header-redline-watermark\.xml"/.exec(rels)?.[1];
    expect(rid).toBeDefined();
    const xml = (await after.file("word/document.xml")?.async("string")) ?? "";
    expect(xml).toMatch(new RegExp(`<w:sectPr\\b[^>]*><w:headerReference w:type="default" r:id="${rid}"/>`));
    expect(await blocksOf(after)).toEqual(await blocksOf(before));
    const types = (await after.file("[Content_Types].xml")?.async("string")) ?? "";
    expect(types).toContain('<Override PartName="/word/header-redline-watermark.xml"');
    // It reads back as the same document (a header holding only a shape has no text to import).
    const back = await convertDocx(marked.bytes, "back.docx", DEFAULT_LIMITS, { keepSource: true });
    const withoutIds = (h: string) => h.replace(/ data-chunk-id="[^"]*"/g, "").trim();
    expect(withoutIds(back.html)).toBe(withoutIds(html(plain.chunks)));
  });

  it("writes a picture an edit added into the package: media part, relationship, content type, drawing", async () => {
    const doc = await load("tika-testWORD_various.docx");
    const inFlow = doc.chunks.filter((c) => doc.source.map.chunks[c.chunkId]);
    const stored = "/v1/media/0123456789abcdef";
    const added = [
      {
        chunkId: "c_newpicture1",
        html: `<p data-chunk-id="c_newpicture1">Logo: <img src="${PNG_2X3}" alt="logo"></p>`,
      },
      {
        chunkId: "c_newpicture2",
        html: `<p data-chunk-id="c_newpicture2"><img src="${stored}" style="width: 50px"></p>`,
      },
    ];
    const chunks = doc.chunks.flatMap((c) => (c === inFlow[1] ? [c, ...added] : [c]));
    const png = Buffer.from(PNG_2X3.split(",")[1], "base64");
    const written = await writeDocxInPlace(html(chunks), doc.source, {
      images: (src) =>
        src === stored ? png : src.startsWith("data:") ? Buffer.from(src.split(",")[1], "base64") : undefined,
    });
    expect(written.warnings).toEqual([]);
    const original = await JSZip.loadAsync(doc.source.bytes);
    const output = await JSZip.loadAsync(written.bytes);
    const changed = await changedParts(original, output);
    const media = changed.filter((n) => n.startsWith("word/media/"));
    // One picture, stored once (both images have the same bytes).
    expect(media).toHaveLength(1);
    expect(media[0]).toMatch(/^word\/media\/redline-[0-9a-f]{16}\.png$/);
    expect((await output.file(media[0])?.async("nodebuffer"))?.equals(png)).toBe(true);
    // The package declared no png: [Content_Types].xml gains a Default for it, nothing else.
    expect(changed.filter((n) => !n.startsWith("word/media/"))).toEqual([
      "[Content_Types].xml",
      "word/_rels/document.xml.rels",
      "word/document.xml",
    ]);
    const types = (await output.file("[Content_Types].xml")?.async("string")) ?? "";
    const typesBefore = (await original.file("[Content_Types].xml")?.async("string")) ?? "";
    expect(types.replace('<Default Extension="png" ContentType="image/png"/>', "")).toBe(typesBefore);
    const rels = (await output.file("word/_rels/document.xml.rels")?.async("string")) ?? "";
    const rid = new RegExp(`Id="([^"]+)" Type="[^"]*/image" Target="${media[0].slice(5)}"`).exec(rels)?.[1];
    expect(rid).toBeDefined();
    const blocks = await blocksOf(output);
    const first = blocks[(written.map.chunks.c_newpicture1 as { index: number }).index];
    const second = blocks[(written.map.chunks.c_newpicture2 as { index: number }).index];
    for (const block of [first, second]) expect(block).toContain(`r:embed="${rid}"`);
    expect(first).toContain("Logo: ");
    // Natural size (2 x 3 px) and the style's 50 px width, in EMU (9525 per px).
    expect(first).toContain('<wp:extent cx="19050" cy="28575"/>');
    expect(second).toContain('<wp:extent cx="476250" cy="714375"/>');
    const ids = [...blocks.join("").matchAll(/<wp:docPr\b[^>]*\sid="(\d+)"/g)].map((m) => m[1]);
    expect(new Set(ids).size).toBe(ids.length);
    // Independent reader: mammoth sees both pictures.
    const read = await mammoth.convertToHtml({ buffer: written.bytes });
    expect(read.value.match(/<img [^>]*src="data:image\/png;base64,/g)).toHaveLength(2);
    const back = await convertDocx(written.bytes, "back.docx", DEFAULT_LIMITS, { keepSource: true });
    expect(back.html).toMatch(/Logo: <img /);
  });

  it("writes what an edit adds to an ISO Strict package in Strict's vocabulary", async () => {
    const doc = await load("mammoth-strict-format.docx");
    const inFlow = doc.chunks.filter((c) => doc.source.map.chunks[c.chunkId]);
    const added = {
      chunkId: "c_newstrict01",
      html: `<p data-chunk-id="c_newstrict01">See <a href="https://example.org/s">this</a> <img src="${PNG_2X3}" alt="dot"></p>`,
    };
    const chunks = doc.chunks.flatMap((c) => (c === inFlow[0] ? [c, added] : [c]));
    const written = await writeDocxInPlace(html(chunks), doc.source, {
      images: (src) => Buffer.from(src.split(",")[1], "base64"),
    });
    expect(written.warnings).toEqual([]);
    const output = await JSZip.loadAsync(written.bytes);
    const rels = (await output.file("word/_rels/document.xml.rels")?.async("string")) ?? "";
    const added_ = rels.match(/<Relationship Id="rIdRl\d+"[^>]*>/g) ?? [];
    expect(added_).toHaveLength(2);
    for (const rel of added_)
      expect(rel).toMatch(/Type="http:\/\/purl\.oclc\.org\/ooxml\/officeDocument\/relationships\/(image|hyperlink)"/);
    const block = (await blocksOf(output))[(written.map.chunks.c_newstrict01 as { index: number }).index];
    expect(block).toContain('uri="http://purl.oclc.org/ooxml/drawingml/picture"');
    expect(block).not.toContain("schemas.openxmlformats.org");
    // Independent reader: mammoth reads Strict, and sees the link and the picture.
    const read = await mammoth.convertToHtml({ buffer: written.bytes });
    expect(read.value).toMatch(
      /See <a href="https:\/\/example\.org\/s">this<\/a> <img [^>]*src="data:image\/png;base64,/,
    );
  });

  it("leaves out a picture it cannot read, with a warning, and writes the rest", async () => {
    const doc = await load("tika-testWORD_various.docx");
    const inFlow = doc.chunks.filter((c) => doc.source.map.chunks[c.chunkId]);
    const added = {
      chunkId: "c_newpicture3",
      html: '<p data-chunk-id="c_newpicture3">Gone <img src="/v1/media/ffff"></p>',
    };
    const chunks = doc.chunks.flatMap((c) => (c === inFlow[1] ? [c, added] : [c]));
    const written = await writeDocxInPlace(html(chunks), doc.source, { images: () => undefined });
    expect(written.warnings).toEqual([
      "1 images added in an edit could not be written into the Word file and were left out",
    ]);
    const blocks = await blocksOf(await JSZip.loadAsync(written.bytes));
    const block = blocks[(written.map.chunks.c_newpicture3 as { index: number }).index];
    expect(block).toContain("Gone");
    expect(block).not.toContain("redline-picture");
    expect(block).not.toContain("<w:drawing>");
  });

  it("relates a link added in a header from the header's own relationships", async () => {
    const doc = await load("poi-DiffFirstPageHeadFoot.docx");
    const header = doc.chunks.find((c) => /data-part="header"/.test(c.html));
    if (!header) throw new Error("no header chunk");
    const edited = header.html.replace(/>([^<]+)</, '>See <a href="https://example.org/terms">terms</a><');
    const written = await writeDocxInPlace(
      html(doc.chunks.map((c) => (c === header ? { ...c, html: edited } : c))),
      doc.source,
    );
    const output = await JSZip.loadAsync(written.bytes);
    const changed = await changedParts(await JSZip.loadAsync(doc.source.bytes), output);
    const part = changed.find((n) => /^word\/header\d*\.xml$/.test(n)) as string;
    const relsName = `${part.replace(/^word\//, "word/_rels/")}.rels`;
    expect(changed.sort()).toEqual([part, relsName].sort());
    const rid = /<w:hyperlink r:id="([^"]+)">/.exec((await output.file(part)?.async("string")) ?? "")?.[1];
    const rels = (await output.file(relsName)?.async("string")) ?? "";
    expect(rels).toContain(`Id="${rid}"`);
    expect(rels).toContain('Target="https://example.org/terms" TargetMode="External"');
  });

  it("writes a picture added to a header and to a note into that part, related from its own relationships", async () => {
    const doc = await load("tika-testWORD_various.docx");
    const header = doc.chunks.find((c) => /data-part="header"/.test(c.html));
    const notes = doc.chunks.find((c) => /data-part="footnote"/.test(c.html));
    if (!header || !notes) throw new Error("no header or notes list");
    const logo = `<img src="${PNG_2X3}" alt="logo">`;
    const edits = new Map([
      [header, header.html.replace(/<\/p>/, ` ${logo}</p>`)],
      [notes, notes.html.replace("This is a footnote.", `This is a footnote. ${logo}`)],
    ]);
    const written = await writeDocxInPlace(
      html(doc.chunks.map((c) => ({ ...c, html: edits.get(c) ?? c.html }))),
      doc.source,
      { images: (src) => Buffer.from(src.split(",")[1], "base64") },
    );
    expect(written.warnings).toEqual([]);
    const output = await JSZip.loadAsync(written.bytes);
    const changed = await changedParts(await JSZip.loadAsync(doc.source.bytes), output);
    const headerPart = changed.find((n) => /^word\/header\d*\.xml$/.test(n)) as string;
    expect(headerPart).toBeDefined();
    const media = changed.filter((n) => n.startsWith("word/media/redline-"));
    // One picture, stored once, related from the header and from the notes part.
    expect(media).toHaveLength(1);
    const docPrIds: string[] = [];
    for (const part of [headerPart, "word/footnotes.xml"]) {
      const relsName = part.replace(/^word\//, "word/_rels/") + ".rels";
      expect(changed).toContain(relsName);
      const xml = (await output.file(part)?.async("string")) ?? "";
      expect(xml).not.toContain("redline-picture");
      const rid = /<a:blip r:embed="([^"]+)"/.exec(xml)?.[1];
      const rels = (await output.file(relsName)?.async("string")) ?? "";
      expect(rels).toMatch(new RegExp(`Id="${rid}"[^>]*Target="media/${media[0].slice("word/media/".length)}"`));
      // The part's root declares the namespaces the picture's run uses.
      expect(/^[\s\S]*?<w:(?:hdr|footnotes)\b[^>]*>/.exec(xml)?.[0]).toMatch(/xmlns:wp="[^"]+"/);
      docPrIds.push(...[...xml.matchAll(/<wp:docPr\b[^>]*\sid="(\d+)"/g)].map((m) => m[1]));
    }
    // Drawing ids stay unique across the package's parts.
    const body = (await output.file("word/document.xml")?.async("string")) ?? "";
    const all = [...docPrIds, ...[...body.matchAll(/<wp:docPr\b[^>]*\sid="(\d+)"/g)].map((m) => m[1])];
    expect(new Set(all).size).toBe(all.length);
    // An independent reader sees the picture in the note.
    const read = await mammoth.convertToHtml({ buffer: written.bytes });
    expect(read.value).toMatch(/This is a footnote\. <img [^>]*src="data:image\/png;base64,/);
  });

  it("writes the page an export asks for into every section; the original's own page changes nothing", async () => {
    const doc = await load("poi-bug65649-large-procurement-tables.docx");
    const own = doc.pageSetup;
    if (!own?.margins) throw new Error("no page setup");
    const same = await writeDocxInPlace(html(doc.chunks), doc.source, {
      page: { size: own.size, orientation: own.orientation, margins: own.margins },
    });
    expect(same.bytes.equals(doc.source.bytes)).toBe(true);

    const written = await writeDocxInPlace(html(doc.chunks), doc.source, {
      page: { size: "Letter", margins: { top: 0.5, right: 0.75, bottom: 0.5, left: 0.75 } },
    });
    const xml = (await (await JSZip.loadAsync(written.bytes)).file("word/document.xml")?.async("string")) ?? "";
    const sizes = [...xml.matchAll(/<w:pgSz\b[^>]*\/>/g)].map((m) => m[0]);
    expect(sizes).toHaveLength(15);
    // The original is A4; its landscape sections stay landscape, on Letter (12240 x 15840 twips).
    expect(sizes.filter((t) => /w:orient="landscape"/.test(t) && /w:w="15840" w:h="12240"/.test(t))).toHaveLength(7);
    expect(sizes.filter((t) => !/w:orient/.test(t) && /w:w="12240" w:h="15840"/.test(t))).toHaveLength(8);
    const margins = [...xml.matchAll(/<w:pgMar\b[^>]*\/>/g)].map((m) => m[0]);
    expect(margins).toHaveLength(15);
    for (const tag of margins)
      expect(tag).toMatch(/w:top="720"[^>]*w:right="1080"[^>]*w:bottom="720"[^>]*w:left="1080"/);
    const back = await convertDocx(written.bytes, "back.docx", DEFAULT_LIMITS, { keepSource: true });
    expect(back.pageSetup).toMatchObject({
      size: "Letter",
      margins: { top: 0.5, right: 0.75, bottom: 0.5, left: 0.75 },
    });
    // Asking for landscape turns every section.
    const turned = await writeDocxInPlace(html(doc.chunks), doc.source, { page: { orientation: "landscape" } });
    const turnedXml = (await (await JSZip.loadAsync(turned.bytes)).file("word/document.xml")?.async("string")) ?? "";
    expect([...turnedXml.matchAll(/<w:pgSz\b[^>]*w:orient="landscape"/g)]).toHaveLength(15);
  }, 120_000);
});

// A 2 x 3 pixel PNG.
const PNG_2X3 =
  "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAIAAAADCAYAAAC56t6BAAAAEklEQVR4nGP4z8DAwMDAxAADAAnyAQWTYV1AAAAAAElFTkSuQmCC";
