// The revision writer on real document.xml built by docx@9: word-level diffs on runs, whole
// inserted/deleted blocks and tables, re-inserted deleted chunks, and unique ids.
import { load } from "cheerio";
import { describe, expect, it } from "vitest";
import { applyRevisions, htmlParagraphTexts, wordEdit } from "./docx-revisions.js";

const NS = 'xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"';
const doc = (body: string) =>
  `<?xml version="1.0" encoding="UTF-8" standalone="yes"?><w:document ${NS}><w:body>${body}<w:sectPr/></w:body></w:document>`;
const para = (...runs: string[]) => `<w:p>${runs.join("")}</w:p>`;
const run = (text: string, bold = false) =>
  `<w:r>${bold ? "<w:rPr><w:b/></w:rPr>" : ""}<w:t xml:space="preserve">${text}</w:t></w:r>`;
const date = new Date("2026-11-24T10:00:00.123Z");
const at = (index: number, count = 1) => ({ kind: "block" as const, index, count });

/** Parses like any XML reader would and returns helpers over the result. */
function parse(xml: string) {
  const $ = load(xml, { xml: { xmlMode: true } });
  const ids = $("w\\:ins, w\\:del")
    .map((_, el) => $(el).attr("w:id"))
    .get();
  return { $, ids };
}

/** The text a reader accepting every revision sees, and the one rejecting them all. */
function views(xml: string) {
  const { $ } = parse(xml);
  const accepted = $("w\\:body > w\\:p")
    .filter((_, p) => $(p).find("w\\:pPr > w\\:rPr > w\\:del").length === 0)
    .map((_, p) =>
      $(p)
        .find("w\\:t")
        .map((__, t) => $(t).text())
        .get()
        .join(""),
    )
    .get();
  const rejected = $("w\\:body > w\\:p")
    .filter((_, p) => $(p).find("w\\:pPr > w\\:rPr > w\\:ins").length === 0)
    .map((_, p) =>
      $(p)
        .find("w\\:t, w\\:delText")
        .filter((__, t) => $(t).closest("w\\:ins").length === 0)
        .map((__, t) => $(t).text())
        .get()
        .join(""),
    )
    .get();
  return { accepted, rejected };
}

describe("wordEdit", () => {
  it("finds replaced words and ignores whitespace-only differences", () => {
    const edit = wordEdit("The quick  brown fox", "The slow brown fox jumps");
    expect(edit.deleted).toEqual([{ at: 4, text: "quick" }]);
    const current = "The slow brown fox jumps";
    expect(edit.inserted.map(([s, e]) => current.slice(s, e))).toEqual(["slow", " jumps"]);
    expect(wordEdit("a  b", "a b")).toEqual({ inserted: [], deleted: [] });
  });
});

describe("htmlParagraphTexts", () => {
  it("splits a chunk into the paragraphs Word shows", () => {
    expect(htmlParagraphTexts("<p>Hello <b>big</b>\n world</p>")).toEqual(["Hello big world"]);
    expect(htmlParagraphTexts("<ul><li>one<ul><li>inner</li></ul></li><li>two</li></ul>")).toEqual([
      "one",
      "inner",
      "two",
    ]);
    expect(htmlParagraphTexts("<table><tr><td>a</td><td><p>b</p><p>c</p></td></tr></table>")).toEqual(["a", "b", "c"]);
  });
});

describe("applyRevisions", () => {
  it("maps a word diff onto the current runs, keeping their formatting", () => {
    const xml = doc(para(run("The slow "), run("brown", true), run(" fox")));
    const out = applyRevisions(
      xml,
      { format: "docx", chunks: { c1: at(0) } },
      [
        {
          chunkId: "c1",
          kind: "modified",
          baseHtml: "<p>The quick <b>brown</b> fox</p>",
          afterChunkId: "",
          author: "Redline AI",
          date,
        },
      ],
      10,
    );
    const { $, ids } = parse(out.xml);
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids.every((id) => Number(id) >= 10)).toBe(true);
    expect($("w\\:del w\\:delText").text()).toBe("quick");
    expect($("w\\:ins w\\:t").text()).toBe("slow");
    expect($("w\\:del").attr("w:author")).toBe("Redline AI");
    expect($("w\\:del").attr("w:date")).toBe("2026-11-24T10:00:00Z");
    // Bold stays on the untouched word's run.
    expect($("w\\:r:has(w\\:b) > w\\:t").text()).toBe("brown");
    const { accepted, rejected } = views(out.xml);
    expect(accepted).toEqual(["The slow brown fox"]);
    expect(rejected).toEqual(["The quick brown fox"]);
  });

  it("marks inserted paragraphs and tables, deleted ones, and re-inserts deleted chunks after their anchor", () => {
    const table = `<w:tbl><w:tblPr/><w:tr><w:tc><w:p>${run("cell")}</w:p></w:tc></w:tr></w:tbl>`;
    const xml = doc(para(run("First")) + para(run("New one")) + table + para(run("Gone but rendered")));
    const map = { format: "docx" as const, chunks: { a: at(0), n: at(1), t: at(2), g: at(3) } };
    const rev = { afterChunkId: "", author: "Ada & Bob", date };
    const out = applyRevisions(xml, map, [
      { chunkId: "n", kind: "inserted", baseHtml: "", ...rev },
      { chunkId: "t", kind: "inserted", baseHtml: "", ...rev },
      { chunkId: "g", kind: "deleted", baseHtml: "<p>Gone but rendered</p>", ...rev },
      { chunkId: "x", kind: "deleted", baseHtml: "<h2>Old heading</h2><p>x</p>", ...rev, afterChunkId: "a" },
      { chunkId: "y", kind: "deleted", baseHtml: "<p>Old first</p>", ...rev },
    ]);
    const { $, ids } = parse(out.xml);
    expect(new Set(ids).size).toBe(ids.length);
    expect(out.skipped).toEqual([]);
    expect($("w\\:trPr > w\\:ins").length).toBe(1);
    expect($("w\\:ins").first().attr("w:author")).toBe("Ada & Bob");
    // Paragraph marks are revised with their runs.
    expect($("w\\:pPr > w\\:rPr > w\\:ins").length).toBe(2);
    expect($("w\\:pPr > w\\:rPr > w\\:del").length).toBe(4);
    const { accepted, rejected } = views(out.xml);
    expect(rejected).toEqual(["Old first", "First", "Old heading", "x", "Gone but rendered"]);
    expect(accepted).toEqual(["First", "New one"]);
    // Body order is kept: the sectPr stays last.
    expect($("w\\:body").children().last().is("w\\:sectPr")).toBe(true);
  });

  it("revises table cells one by one and replaces a chunk whose shape changed", () => {
    const cell = (t: string) => `<w:tc><w:p>${run(t)}</w:p></w:tc>`;
    const xml = doc(`<w:tbl><w:tr>${cell("a")}${cell("b2")}</w:tr></w:tbl>${para(run("one")) + para(run("two"))}`);
    const out = applyRevisions(xml, { format: "docx", chunks: { t: at(0), l: at(1, 2) } }, [
      {
        chunkId: "t",
        kind: "modified",
        baseHtml: "<table><tr><td>a</td><td>b</td></tr></table>",
        afterChunkId: "",
        author: "U",
        date,
      },
      { chunkId: "l", kind: "modified", baseHtml: "<ol><li>only</li></ol>", afterChunkId: "", author: "U", date },
    ]);
    const { $, ids } = parse(out.xml);
    expect(new Set(ids).size).toBe(ids.length);
    expect($("w\\:tc").first().find("w\\:ins, w\\:del").length).toBe(0);
    expect($("w\\:tc").last().find("w\\:del w\\:delText").text()).toBe("b");
    expect($("w\\:tc").last().find("w\\:ins w\\:t").text()).toBe("b2");
    const { rejected } = views(out.xml);
    expect(rejected).toEqual(["only"]);
  });
});
