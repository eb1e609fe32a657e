// The generated docx with tracked changes: chunks found in the built body by their markers (none
// left in any part), revisions on the right blocks, ids unique across the package.
import { load } from "cheerio";
import JSZip from "jszip";
import { describe, expect, it } from "vitest";
import { locateChunks, markChunks } from "./docx-chunk-map.js";
import { htmlToDocx } from "./to-docx.js";

const layout = {
  widthIn: 8.5,
  heightIn: 11,
  orientation: "portrait" as const,
  margins: { top: 1, right: 1, bottom: 1, left: 1 },
  paperName: "Letter" as const,
};
const date = new Date("2026-11-24T09:30:00Z");

const HTML = [
  '<h1 data-chunk-id="h">Terms</h1>',
  '<p data-chunk-id="a">See the note<a href="#footnote-1" id="footnote-ref-1">[1]</a> here.</p>',
  '<hr data-chunk-id="rule">',
  '<blockquote data-chunk-id="q"><p>quoted text</p><p>two</p></blockquote>',
  '<table data-chunk-id="t"><tr><td>Plan</td><td>Price</td></tr><tr><td>Pro</td><td>$20</td></tr></table>',
  '<ol data-part="footnote" data-chunk-id="notes"><li id="footnote-1"><p>The note.</p></li></ol>',
].join("");

describe("htmlToDocx with tracked changes", () => {
  it("finds every marked chunk's blocks and leaves no marker behind", async () => {
    const marked = markChunks(HTML, [{ chunkId: "gone", baseHtml: "<p>Old</p>", afterChunkId: "a" }]);
    expect(marked.chunkIds).toEqual(["h", "a", "gone", "q", "t", "notes"]);
    const built = await htmlToDocx({ html: marked.html, title: "t", layout, images: new Map() });
    const zip = await JSZip.loadAsync(built.bytes);
    const xml = (await zip.file("word/document.xml")?.async("string")) ?? "";
    expect(marked.unmarked).toEqual({ 2: ["rule"] });
    const { xml: clean, map } = locateChunks(xml, marked.chunkIds, marked.unmarked);
    expect(clean).not.toMatch(/\uE000|&#xe000;/i);
    // h, a, gone, the rule (unmarked: the block before the next marked one), the quote's 2
    // paragraphs, the table, the notes.
    expect(map.chunks).toEqual({
      h: { kind: "block", index: 0, count: 1 },
      a: { kind: "block", index: 1, count: 1 },
      gone: { kind: "block", index: 2, count: 1 },
      rule: { kind: "block", index: 3, count: 1 },
      q: { kind: "block", index: 4, count: 2 },
      t: { kind: "block", index: 6, count: 1 },
      notes: { kind: "block", index: 7, count: 1 },
    });
  });

  it("writes modified, inserted and deleted chunks as revisions with ids unique in the package", async () => {
    const built = await htmlToDocx({
      html: HTML,
      title: "t",
      layout,
      images: new Map(),
      trackedChanges: [
        {
          chunkId: "q",
          kind: "modified",
          baseHtml: "<blockquote><p>quote text</p><p>two</p></blockquote>",
          afterChunkId: "",
          author: "Redline AI",
          date,
        },
        { chunkId: "t", kind: "inserted", baseHtml: "", afterChunkId: "", author: "Ada", date },
        { chunkId: "x", kind: "deleted", baseHtml: "<h2>Old heading</h2>", afterChunkId: "h", author: "Ada", date },
      ],
    });
    expect(built.warnings).toEqual([]);
    const zip = await JSZip.loadAsync(built.bytes);
    const ids: string[] = [];
    for (const file of Object.values(zip.files)) {
      if (file.dir || !file.name.endsWith(".xml")) continue;
      const xml = await file.async("string");
      expect(xml, file.name).not.toMatch(/\uE000|&#xe000;/i);
      ids.push(...[...xml.matchAll(/<w:(?:ins|del|bookmarkStart) [^>]*w:id="(\d+)"/g)].map((m) => m[1]));
    }
    expect(new Set(ids).size).toBe(ids.length);
    const $ = load((await zip.file("word/document.xml")?.async("string")) ?? "", { xml: true });
    const body = $("w\\:body").children();
    // The deleted heading is back after the heading it followed, with its style, deleted.
    expect(body.eq(1).find("w\\:pStyle").attr("w:val")).toBe("Heading2");
    expect(body.eq(1).find("w\\:delText").text()).toBe("Old heading");
    expect($("w\\:del w\\:delText").first().text()).toBe("Old heading");
    expect($('w\\:del[w\\:author="Redline AI"] w\\:delText').text()).toBe("quote");
    expect($('w\\:ins[w\\:author="Redline AI"] w\\:t').text()).toBe("quoted");
    expect($('w\\:trPr > w\\:ins[w\\:author="Ada"]').length).toBe(2);
    expect($("w\\:tbl w\\:ins w\\:t").text()).toBe("PlanPricePro$20");
  });
});
