import JSZip from "jszip";
import { describe, expect, it } from "vitest";
import { convertDocx } from "../converters/docx.js";
import { resolveLayout } from "../export/export-formats.js";
import { htmlToDocx } from "../export/to-docx.js";
import { DEFAULT_LIMITS } from "../formats.js";
import { readCorpus } from "../testing/corpus.js";
import { anchorComments, commentAnchors, insertInParagraph } from "./comments.js";

const text = (xml: string) => [...xml.matchAll(/<w:t\b[^>]*>([^<]*)<\/w:t>/g)].map((m) => m[1]).join("");

describe("docx comments", () => {
  it("imports each comment with the text it is anchored to", async () => {
    const bytes = readCorpus("docx/pydocx-comments-rich-para.docx");
    const documentXml = (await (await JSZip.loadAsync(bytes)).file("word/document.xml")?.async("string")) ?? "";
    const anchors = commentAnchors(documentXml);
    expect(anchors.size).toBe(4);
    const converted = await convertDocx(bytes, "c.docx", DEFAULT_LIMITS, { keepSource: true });
    const found = [...converted.html.matchAll(/<p [^>]*data-part="comment"[^>]*data-anchor="([^"]*)"/g)].map(
      (m) => m[1],
    );
    expect(found.length).toBe(anchors.size);
    for (const anchor of found) expect(text(documentXml)).toContain(anchor);
  });

  it("a generated export writes comments.xml and anchors each comment around its text", async () => {
    const bytes = readCorpus("docx/pydocx-comments-rich-para.docx");
    const converted = await convertDocx(bytes, "c.docx", DEFAULT_LIMITS, { keepSource: true });
    const built = await htmlToDocx({
      html: converted.html,
      title: "c",
      layout: resolveLayout({}, converted.pageSetup),
      images: new Map(),
    });
    expect(built.warnings.join(" ")).not.toMatch(/comment/i);
    const zip = await JSZip.loadAsync(built.bytes);
    const commentsXml = (await zip.file("word/comments.xml")?.async("string")) ?? "";
    const documentXml = (await zip.file("word/document.xml")?.async("string")) ?? "";
    const count = (re: RegExp, xml: string) => xml.match(re)?.length ?? 0;
    expect(count(/<w:comment\b/g, commentsXml)).toBe(4);
    for (const tag of ["commentRangeStart", "commentRangeEnd", "commentReference"]) {
      expect(count(new RegExp(`<w:${tag}\\b`, "g"), documentXml)).toBe(4);
    }
    // Read back: the same comments (authors, anchors, text; docx/html folds runs of spaces).
    const back = await convertDocx(built.bytes, "back.docx", DEFAULT_LIMITS, { keepSource: true });
    const comments = (html: string) =>
      [...html.matchAll(/<p [^>]*data-part="comment"[^>]*>([\s\S]*?)<\/p>/g)].map((m) =>
        m[0].replace(/ data-(chunk|comment)-id="[^"]*"/g, "").replace(/ {2,}/g, " "),
      );
    expect(comments(back.html)).toEqual(comments(converted.html));
  });

  it("splits a run so a comment covers exactly its words", () => {
    const p =
      '<w:p><w:pPr><w:jc w:val="left"/></w:pPr><w:r><w:rPr><w:b/></w:rPr><w:t>Hello brave world</w:t></w:r></w:p>';
    const out = anchorComments(`<w:body>${p}</w:body>`, [
      { sourceId: "1", author: "A", anchor: "brave", lines: ["x"] },
    ]);
    expect(out).toContain(
      '<w:t xml:space="preserve">Hello </w:t></w:r><w:commentRangeStart w:id="0"/><w:r><w:rPr><w:b/></w:rPr><w:t xml:space="preserve">brave</w:t></w:r><w:commentRangeEnd w:id="0"/>',
    );
    expect(text(out)).toBe("Hello brave world");
    // Text that is gone: the comment sits at the start of the first paragraph.
    const missing = insertInParagraph(p, [{ offset: 0, xml: "<X/>" }]);
    expect(missing).toContain("</w:pPr><X/><w:r>");
  });
});
