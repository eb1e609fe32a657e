import { describe, expect, it } from "vitest";
import { chunkHtml } from "./chunk-html.js";
import { ChunkError } from "./errors.js";
import { countSections, outline, sectionSpan, sections, textOf } from "./outline.js";
import type { ChunkRecord } from "./types.js";

const doc: ChunkRecord[] = chunkHtml(
  [
    `<p data-chunk-id="intro">Intro text</p>`,
    `<h1 data-chunk-id="h1a">Part   One</h1>`,
    `<p data-chunk-id="p1">Para one</p>`,
    `<h2 data-chunk-id="h2a">Sub A</h2>`,
    `<p data-chunk-id="p2">Para two</p>`,
    `<h3 data-chunk-id="h3a">Deep</h3>`,
    `<table data-chunk-id="t1"><tr><td>cell a</td><td>cell b</td></tr></table>`,
    `<h2 data-chunk-id="h2b">Sub B</h2>`,
    `<h1 data-chunk-id="h1b">Part Two</h1>`,
    `<ul data-chunk-id="l1"><li>x</li><li>y</li></ul>`,
  ].join(""),
).chunks;

describe("textOf", () => {
  it("returns folded plain text with block boundaries as spaces", () => {
    expect(textOf("<p>  Hello\n <b>big</b>&nbsp;world&amp;co </p>")).toBe("Hello big world&co");
    expect(textOf("<table><tr><td>a</td><td>b</td></tr></table>")).toBe("a b");
    expect(textOf("<p>line<br>next</p>")).toBe("line next");
    expect(textOf("<div>a<script>x()</script><style>p{}</style></div>")).toBe("a");
  });
});

describe("outline", () => {
  it("lists every chunk with tag, level and preview", () => {
    const entries = outline(doc);
    expect(entries.map((e) => [e.chunkId, e.tag, e.level])).toEqual([
      ["intro", "p", 0],
      ["h1a", "h1", 1],
      ["p1", "p", 0],
      ["h2a", "h2", 2],
      ["p2", "p", 0],
      ["h3a", "h3", 3],
      ["t1", "table", 0],
      ["h2b", "h2", 2],
      ["h1b", "h1", 1],
      ["l1", "ul", 0],
    ]);
    expect(entries[1].preview).toBe("Part One");
    expect(entries[6].preview).toBe("cell a cell b");
  });

  it("cuts previews to previewChars with an ellipsis", () => {
    const [entry] = outline([{ chunkId: "a", html: `<p data-chunk-id="a">${"word ".repeat(40)}</p>` }], {
      previewChars: 12,
    });
    expect(entry.preview).toBe("word word w…");
    expect(entry.preview.length).toBe(12);
  });
});

describe("sections", () => {
  it("gives each chunk to its innermost section, with a leading section", () => {
    expect(sections(doc)).toEqual([
      { headingChunkId: null, level: 0, title: "", chunkIds: ["intro"] },
      { headingChunkId: "h1a", level: 1, title: "Part One", chunkIds: ["h1a", "p1"] },
      { headingChunkId: "h2a", level: 2, title: "Sub A", chunkIds: ["h2a", "p2"] },
      { headingChunkId: "h3a", level: 3, title: "Deep", chunkIds: ["h3a", "t1"] },
      { headingChunkId: "h2b", level: 2, title: "Sub B", chunkIds: ["h2b"] },
      { headingChunkId: "h1b", level: 1, title: "Part Two", chunkIds: ["h1b", "l1"] },
    ]);
    expect(countSections(doc)).toBe(6);
  });

  it("omits an empty leading section", () => {
    const withoutIntro = doc.slice(1);
    expect(sections(withoutIntro)[0].headingChunkId).toBe("h1a");
    expect(countSections(withoutIntro)).toBe(5);
    expect(sections([])).toEqual([]);
  });
});

describe("sectionSpan", () => {
  it("spans a heading and its subsections up to the next heading of the same or higher level", () => {
    expect(sectionSpan(doc, "h1a")).toEqual(["h1a", "p1", "h2a", "p2", "h3a", "t1", "h2b"]);
    expect(sectionSpan(doc, "h2a")).toEqual(["h2a", "p2", "h3a", "t1"]);
    expect(sectionSpan(doc, "h3a")).toEqual(["h3a", "t1"]);
    expect(sectionSpan(doc, "h1b")).toEqual(["h1b", "l1"]);
  });

  it("throws for unknown ids and non-headings", () => {
    expect(() => sectionSpan(doc, "nope")).toThrow(expect.objectContaining({ code: "unknown_chunk" }));
    expect(() => sectionSpan(doc, "p1")).toThrow(ChunkError);
    expect(() => sectionSpan(doc, "p1")).toThrow(expect.objectContaining({ code: "not_heading" }));
  });
});
