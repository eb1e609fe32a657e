import JSZip from "jszip";
import { describe, expect, it } from "vitest";
import { bodyLayout } from "../docx/source-map.js";
import { readCorpus } from "../testing/corpus.js";
import { REPEATING_SECTION_XML, repeatingSectionDocx, SECTION_PARAGRAPHS } from "../testing/fidelity-docs.js";
import { inPlaceSource } from "../testing/in-place-source.js";
import { writeDocxInPlace } from "./docx-in-place.js";

async function load(bytes: Buffer) {
  const { chunks, source } = await inPlaceSource(bytes, "section.docx");
  return { chunks, source };
}

async function documentXml(bytes: Buffer): Promise<string> {
  return (await (await JSZip.loadAsync(bytes)).file("word/document.xml")?.async("string")) ?? "";
}

const count = (xml: string, re: RegExp) => (xml.match(re) ?? []).length;
const texts = (xml: string) =>
  (xml.match(/<w:p\b[^>]*?(?<!\/)>[\s\S]*?<\/w:p>/g) ?? []).map((p) =>
    [...p.matchAll(/<w:t\b[^>]*>([^<]*)<\/w:t>/g)].map((m) => m[1]).join(""),
  );

describe("content controls written back in place", () => {
  it("edits each paragraph of a repeating section inside the control: four paragraphs and the control stay", async () => {
    const bytes = await repeatingSectionDocx();
    const { chunks, source } = await load(bytes);
    const before = await documentXml(bytes);
    expect(before).toContain(REPEATING_SECTION_XML);
    for (const [k, text] of SECTION_PARAGRAPHS.entries()) {
      const html = chunks.map((c) => c.html.replace(`>${text}<`, `>${text} Edited ${k}.<`)).join("\n");
      const written = await writeDocxInPlace(html, source);
      const after = await documentXml(written.bytes);
      expect(written.warnings).toEqual([]);
      expect(count(after, /<w:sdt>/g)).toBe(3);
      expect(count(after, /<w15:repeatingSection\/>/g)).toBe(1);
      expect(count(after, /<w15:repeatingSectionItem\/>/g)).toBe(2);
      const expected = ["Before the section.", ...SECTION_PARAGRAPHS, "After the section."].map((t) =>
        t === text ? `${t} Edited ${k}.` : t,
      );
      expect(texts(after)).toEqual(expected);
      // Only the edited paragraph differs: the control's properties and other paragraphs are the original bytes.
      const untouched = REPEATING_SECTION_XML.replace(
        new RegExp(`<w:p><w:r><w:t>${text.replace(/\./g, "\\.")}</w:t></w:r></w:p>`),
        "",
      );
      const rest = after.replace(/<w:p><w:r><w:t xml:space="preserve">[^<]*Edited[^<]*<\/w:t><\/w:r><\/w:p>/, "");
      expect(rest).toContain(untouched);
    }
  });

  it("deletes one paragraph of the section and keeps the other three and the control", async () => {
    const bytes = await repeatingSectionDocx();
    const { chunks, source } = await load(bytes);
    // The chunk of the section's first paragraph owns the whole control block.
    const first = chunks.find((c) => c.html.includes(SECTION_PARAGRAPHS[0]));
    expect(first && source.map.chunks[first.chunkId]).toBeDefined();
    const written = await writeDocxInPlace(
      chunks
        .filter((c) => c !== first)
        .map((c) => c.html)
        .join("\n"),
      source,
    );
    const after = await documentXml(written.bytes);
    expect(texts(after)).toEqual(["Before the section.", ...SECTION_PARAGRAPHS.slice(1), "After the section."]);
    expect(count(after, /<w:sdt>/g)).toBe(3);
  });

  it("refuses an edit it cannot place inside the control with a warning naming it, and keeps the original bytes", async () => {
    const bytes = await repeatingSectionDocx();
    const { chunks, source } = await load(bytes);
    // The first paragraph made a list of two items: a paragraph of the control cannot become two here.
    const html = chunks
      .map((c) =>
        c.html.includes(SECTION_PARAGRAPHS[0])
          ? c.html.replace(/^<p([^>]*)>[^<]*<\/p>$/, "<ul$1><li>One half.</li><li>Other half.</li></ul>")
          : c.html,
      )
      .join("\n");
    const written = await writeDocxInPlace(html, source);
    const after = await documentXml(written.bytes);
    expect(after).toContain(REPEATING_SECTION_XML);
    expect(after).not.toContain("One half.");
    expect(written.warnings).toHaveLength(1);
    expect(written.warnings[0]).toContain("a repeating-section content control (w:sdt)");
    expect(written.warnings[0]).toContain(`"${SECTION_PARAGRAPHS[0]}"`);
    // What the warning says is true: the passage still reads as it did.
    expect(texts(after)).toContain(SECTION_PARAGRAPHS[0]);
  });

  it("never edits both copies of a repeated item: an edit of the second copy is refused with a warning, the text kept", async () => {
    const bytes = readCorpus("docx/tika-testWORD_2006ml.docx");
    const { chunks, map, source } = await inPlaceSource(bytes, "2006ml.docx");
    const copies = chunks.filter((c) => />Repeating content</.test(c.html));
    expect(copies.length).toBeGreaterThan(1);
    // A copy that is not the control's first paragraph (no block of its own).
    const second = copies.find((c) => !map.chunks[c.chunkId]);
    if (!second) throw new Error("no unmapped copy");
    const html = chunks.map((c) => (c === second ? c.html.replace(">Repeating content<", ">Changed copy<") : c.html));
    const written = await writeDocxInPlace(html.join("\n"), source);
    const after = await documentXml(written.bytes);
    expect(after).not.toContain("Changed copy");
    const repeated = (xml: string) => texts(xml).filter((t) => t === "Repeating content").length;
    expect(repeated(after)).toBe(repeated(await documentXml(bytes)));
    expect(
      written.warnings.some((w) => /could not be written into the original file and keep their original text/.test(w)),
    ).toBe(true);
  });

  it("keeps the corpus's content controls, drawings and numbering when every paragraph inside a control is edited", async () => {
    const bytes = readCorpus("docx/tika-testWORD_2006ml.docx");
    const { chunks, map, source } = await inPlaceSource(bytes, "2006ml.docx");
    const before = await documentXml(bytes);
    const body = before.slice(before.indexOf("<w:body>"));
    const blocks = bodyLayout(before).blocks;
    const inControl = chunks.filter((c) => {
      const span = map.chunks[c.chunkId];
      return span?.kind === "block" && blocks[span.index]?.name === "sdt" && /^<p\b[^>]*>[^<]*\p{L}{3}/u.test(c.html);
    });
    expect(inControl.length).toBeGreaterThan(0);
    const html = chunks
      .map((c) => (inControl.includes(c) ? c.html.replace(/>([^<]*?)(\p{L}{3,})/u, ">$1revised $2") : c.html))
      .join("\n");
    const written = await writeDocxInPlace(html, source);
    const after = await documentXml(written.bytes);
    const afterBody = after.slice(after.indexOf("<w:body>"));
    for (const re of [/<w:sdt>/g, /<w:sdtContent>/g, /<w:drawing>/g, /<w:numPr>/g, /<w:tbl>/g])
      expect(count(afterBody, re)).toBe(count(body, re));
    // Only the cleaning of a file: link is reported; the repeated item's edit went into its first copy.
    expect(written.warnings).toHaveLength(1);
    expect(written.warnings[0]).toMatch(/^Removed 1 link/);
    expect(count(afterBody, /revised /g)).toBe(inControl.length);
    expect(texts(afterBody).length).toBe(texts(body).length);
  }, 120_000);
});
