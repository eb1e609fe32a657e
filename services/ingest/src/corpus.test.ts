// The corpus of real documents (test/fixtures/corpus), each file converted by its converter
// and checked against the structure its MANIFEST.md entry describes: table shapes and cell text,
// merged cells, list kinds and lengths, footnotes, headers and footers, comments, images, page
// setup, encodings; and the edge files refused with actionable 4xx messages.
import { RedlineError } from "@redline/service-kit";
import * as cheerio from "cheerio";
import { describe, expect, it } from "vitest";
import { convertInProcess } from "./convert-in-process.js";
import { type ConvertResult, DEFAULT_LIMITS, formatForFilename } from "./formats.js";
import { readCorpus } from "./testing/corpus.js";

async function convert(relative: string): Promise<{ result: ConvertResult; $: cheerio.CheerioAPI }> {
  const name = relative.split("/").pop() as string;
  const result = await convertInProcess(formatForFilename(name), name, readCorpus(relative), DEFAULT_LIMITS);
  return { result, $: cheerio.load(result.html) };
}

async function refusal(relative: string): Promise<RedlineError> {
  const err = await convert(relative).then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(RedlineError);
  return err as RedlineError;
}

/** Rows x widest row of each top-level table ("2x3"). */
function shapes($: cheerio.CheerioAPI): string[] {
  return $("table")
    .toArray()
    .map((t) => {
      const rows = $(t)
        .find("tr")
        .filter((_, tr) => $(tr).closest("table")[0] === t)
        .toArray();
      return `${rows.length}x${Math.max(...rows.map((tr) => $(tr).children("td, th").length))}`;
    });
}

const cellText = ($: cheerio.CheerioAPI, table: number) =>
  $("table")
    .eq(table)
    .find("tr")
    .toArray()
    .map((tr) =>
      $(tr)
        .children("td, th")
        .toArray()
        .map((c) => $(c).text().trim()),
    );

// The tika "various" documents (docx, rtf) share one 2x3 table and a bullet list of 3.
function expectVariousLayout($: cheerio.CheerioAPI, row: number): void {
  expect(shapes($)).toEqual(["2x3"]);
  expect(cellText($, 0)[row]).toEqual([1, 2, 3].map((col) => `Row ${row + 1} Col ${col}`));
  expect($("ul > li").length).toBe(3);
}

describe("docx corpus", () => {
  it("tika-testWORD_various: 2x3 table, bullet + '1)' list of 3, footnote, header, footer, link, inline styles, non-BMP", async () => {
    const { $, result } = await convert("docx/tika-testWORD_various.docx");
    expectVariousLayout($, 1);
    expect($("ol:not([data-part]) > li").length).toBe(3);
    expect($('ol[data-part="footnote"] > li').text()).toContain("This is a footnote.");
    expect($('[data-part="header"]').text()).toBe("This is the header text.");
    expect($('[data-part="footer"]').text()).toBe("This is the footer text.");
    expect($('a[href="http://tika.apache.org/"]').text()).toBe("This is a hyperlink");
    for (const tag of ["strong", "em", "u", "s", "sup", "sub"]) expect($(tag).length, tag).toBeGreaterThan(0);
    expect(result.html).toContain("𐌲𐌿𐍄𐌹𐍃𐌺");
    expect(result.html).toContain("ゾルゲと尾崎、淡々と最期");
  });

  it("tika-testWORD_2006ml: tracked changes accepted, nested table, footnote + endnote, three header/footer variants, comment", async () => {
    const { $, result } = await convert("docx/tika-testWORD_2006ml.docx");
    expect($("table table").length).toBe(1);
    // The fully deleted table is gone, not an empty shell.
    expect($("table:not(:has(tr))").length).toBe(0);
    expect($('[id^="footnote-"]').length).toBeGreaterThanOrEqual(1);
    expect($('[id^="endnote-"]').length).toBeGreaterThanOrEqual(1);
    expect(
      $('[data-part="header"]')
        .toArray()
        .map((e) => $(e).attr("data-variant")),
    ).toEqual(expect.arrayContaining(["default", "first", "even"]));
    expect($('[data-part="footer"]').length).toBe(3);
    expect($('[data-part="comment"]').length).toBeGreaterThanOrEqual(1);
    expect($("h1").length).toBeGreaterThan(0);
    expect(result.warnings.join(" ")).toMatch(/Tracked changes were accepted/);
  });

  it("pydocx-tbl-cell-access-merged: four 3x3 grids with gridSpan and vMerge as colspan/rowspan", async () => {
    const { $ } = await convert("docx/pydocx-tbl-cell-access-merged.docx");
    expect($("table").length).toBe(4);
    expect($("table").eq(0).find("[colspan],[rowspan]").length).toBe(0);
    expect($("table").eq(1).find('[colspan="2"]').length).toBe(1);
    expect($("table").eq(2).find('[rowspan="2"]').length).toBe(1);
    expect($("table").eq(3).find('[colspan="2"][rowspan="2"]').length).toBe(1);
  });

  it("poi-delins-tracked-changes: insertions kept, deleted list items gone, 7 underlined links", async () => {
    const { $, result } = await convert("docx/poi-delins-tracked-changes.docx");
    expect(
      new Set(
        $("a[href^=http]")
          .toArray()
          .map((a) => $(a).attr("href")),
      ).size,
    ).toBeGreaterThanOrEqual(7);
    expect($("ul li").length).toBeGreaterThan(5);
    expect(result.warnings.join(" ")).toMatch(/Tracked changes were accepted/);
  });

  it("tika-testWORD_numbered_list: nested lists up to 5 levels, a table between lists, lists in a comment and a footnote", async () => {
    const { $ } = await convert("docx/tika-testWORD_numbered_list.docx");
    const depth = Math.max(
      ...$("li")
        .toArray()
        .map((li) => $(li).parents("ol, ul").length),
    );
    // Word levels 0-4, but levels Word skips (0 → 2 → 4) nest once each: no empty wrapper items.
    expect(depth).toBeGreaterThanOrEqual(3);
    // "This is a new list that starts at 6": Word's numbering, which mammoth alone drops.
    expect(
      $("ol")
        .filter((_, ol) => $(ol).children("li").first().text().startsWith("six"))
        .attr("start"),
    ).toBe("6");
    expect(shapes($)).toEqual(["3x4"]);
    expect($('ol[data-part="footnote"] li').length).toBeGreaterThan(0);
    expect($('[data-part="comment"]').length).toBeGreaterThan(0);
  });

  it("pydocx-comments-rich-para: four comments out of flow, with authors", async () => {
    const { $ } = await convert("docx/pydocx-comments-rich-para.docx");
    expect($('[data-part="comment"]').length).toBe(4);
    expect($('[data-part="comment"]').first().attr("data-author")).toBe("Steve Canny");
  });

  it("poi-DiffFirstPageHeadFoot: default 3-column header/footer and first-page ones", async () => {
    const { $ } = await convert("docx/poi-DiffFirstPageHeadFoot.docx");
    expect($('[data-part="header"][data-variant="default"]').text()).toMatch(
      /First header column!.*Mid header.*Right header!/,
    );
    expect($('[data-part="header"][data-variant="first"]').text()).toContain("first page");
    expect($('[data-part="footer"][data-variant="first"]').text()).toBe("The footer of the first page");
  });

  it("poi-VariousPictures: five images (JPEG, PNG, WMF, 2x EMF) embedded", async () => {
    const { $ } = await convert("docx/poi-VariousPictures.docx");
    const types = $("img")
      .toArray()
      .map((i) => /^data:(image\/[\w.+-]+);/.exec($(i).attr("src") ?? "")?.[1]);
    expect(types).toHaveLength(5);
    expect(types).toEqual(expect.arrayContaining(["image/jpeg", "image/png"]));
  });

  it("poi-bug59058-seer-cancer-stats: 6 data tables with column spans, images, ~300 links, a long list", async () => {
    const { $ } = await convert("docx/poi-bug59058-seer-cancer-stats.docx");
    expect($("table").length).toBe(6);
    expect($("[colspan]").length).toBeGreaterThan(0);
    expect($("img").length).toBeGreaterThanOrEqual(13);
    expect($("a[href]").length).toBeGreaterThan(290);
    expect($("li").length).toBeGreaterThan(70);
  });

  it("poi-IllustrativeCases-budget-tables: 8 tables of figures with euro amounts, footer-free body", async () => {
    const { $, result } = await convert("docx/poi-IllustrativeCases-budget-tables.docx");
    expect(shapes($)).toHaveLength(8);
    expect(result.html).toContain("€");
  });

  it("poi-Bug51170-statutes-pt: accented text, footer part, A4", async () => {
    const { $, result } = await convert("docx/poi-Bug51170-statutes-pt.docx");
    expect(result.html).toMatch(/Indústria/);
    expect($('[data-part="footer"]').length).toBeGreaterThan(0);
    expect(result.pageSetup?.size).toBe("A4");
  });

  it("mammoth-strict-format: ISO Strict, one paragraph", async () => {
    const { result } = await convert("docx/mammoth-strict-format.docx");
    expect(result.html).toBe("<p>Test</p>");
  });

  it("refuses the truncated, encrypted and legacy files with actionable 4xx", async () => {
    expect((await refusal("docx/poi-truncated62886.docx")).httpStatus).toBe(400);
    const encrypted = await refusal("docx/tika-testWORD_protected_passtika.docx");
    expect(encrypted.httpStatus).toBe(400);
    expect(encrypted.message).toMatch(/password/);
    const legacy = await refusal("doc/tika-testWORD_various.doc");
    expect(legacy.httpStatus).toBe(415);
    expect(legacy.message).toContain(".docx");
  });
});

describe("pdf corpus", () => {
  it("tika-testPDFVarious: list items, table text, Japanese, Letter page setup with margins", async () => {
    const { result } = await convert("pdf/tika-testPDFVarious.pdf");
    for (const text of [
      "Bullet 1",
      "1) Number bullet 1",
      "Row 2 Col 3",
      "ゾルゲと尾崎、淡々と最期",
      "This is a footnote.",
    ])
      expect(result.html).toContain(text);
    expect(result.pageSetup).toMatchObject({ size: "Letter", orientation: "portrait" });
    expect(result.pageSetup?.margins).not.toBeNull();
  });

  it("irs-fd_ins_8863: two columns read column by column", async () => {
    const { result } = await convert("pdf/irs-fd_ins_8863-2013.pdf");
    expect(result.html).toContain("<p>Section references are to the Internal Revenue Code unless otherwise noted.</p>");
  });

  it("nd-ins-taxtable: dense numeric tables become tables, a row per income bracket", async () => {
    const { $ } = await convert("pdf/nd-ins-taxtable-2013.pdf");
    // Each page's ruled grid is one table; rules drawn every few brackets still give a row each.
    expect($("table").length).toBeGreaterThanOrEqual(12);
    const rows = $("tr")
      .map((_, tr) =>
        $(tr)
          .children("td")
          .map((_, td) => $(td).text())
          .get()
          .join("|"),
      )
      .get();
    expect(rows.length).toBeGreaterThan(600);
    expect(rows.some((r) => r.includes("2,350 2,375|29|29|29|29"))).toBe(true);
  });

  it("refuses the user-password PDF and opens the owner-password one", async () => {
    expect((await refusal("pdf/pdf2json-i43_err_encrypted.pdf")).message).toMatch(/password/);
    const { result } = await convert("pdf/tika-testPDF_protected-ownerpw.pdf");
    expect(result.pageSetup?.size).toBe("A4");
  });
});

describe("rtf corpus", () => {
  it("tika-testRTFVarious: 2x3 table, bullet and numbered lists, footnote, link, styles, non-BMP", async () => {
    const { $, result } = await convert("rtf/tika-testRTFVarious.rtf");
    expectVariousLayout($, 0);
    expect($("ol > li").text()).toContain("Number bullet 1");
    expect($("a[href]").length).toBe(1);
    for (const tag of ["strong", "em", "u", "sup", "sub"]) expect($(tag).length, tag).toBeGreaterThan(0);
    expect(result.html).toContain("𐌲𐌿𐍄𐌹𐍃𐌺");
  });

  it("tika-testRTFVarious: header and footer as out-of-flow parts, footnote list", async () => {
    const { $ } = await convert("rtf/tika-testRTFVarious.rtf");
    expect($('[data-part="header"]').text()).toBe("This is the header text.");
    expect($('[data-part="footer"]').text()).toBe("This is the footer text.");
    expect($('ol[data-part="footnote"] li').text()).toBe("This is a footnote.");
  });

  it("tika-testRTFRegularImages: two JPEG pictures in place (WMF fallbacks ignored)", async () => {
    const { $, result } = await convert("rtf/tika-testRTFRegularImages.rtf");
    const sources = $("img")
      .toArray()
      .map((i) => $(i).attr("src") ?? "");
    expect(sources).toHaveLength(2);
    for (const src of sources) expect(src).toMatch(/^data:image\/jpeg;base64,\/9j\//);
    expect(result.html).toMatch(/^<p>Duck: <img [^>]+>cat: <img [^>]+><\/p>$/);
  });

  it("tika-testRTFTableCellSeparation: cells a, b / c, d", async () => {
    const { $ } = await convert("rtf/tika-testRTFTableCellSeparation.rtf");
    expect(cellText($, 0).slice(0, 2)).toEqual([
      ["a", "b"],
      ["c", "d"],
    ]);
  });

  it("tika-testRTFListMicrosoftWord: ordered, unordered and nested lists", async () => {
    const { $ } = await convert("rtf/tika-testRTFListMicrosoftWord.rtf");
    expect($("ol").length).toBeGreaterThan(0);
    expect($("ul").length).toBeGreaterThan(0);
    expect($("li").length).toBeGreaterThanOrEqual(9);
  });
});

describe("md, html and txt corpus", () => {
  it("tika-testMARKDOWN: ordered list from 3, aligned table, strikethrough, accents", async () => {
    const { $, result } = await convert("md/tika-testMARKDOWN.md");
    expect($("ol").attr("start")).toBe("3");
    expect(shapes($)).toEqual(["2x3"]);
    expect($("del").text()).toBe("struck");
    expect(result.html).toContain("Café naïve résumé");
  });

  // Element counts that show a structure survived: [file, selector, at least, at most].
  it.each([
    ["md/pdfjs-README.md", "table", 2, 2],
    ["md/pdfjs-README.md", "td code", 1, Infinity],
    ["md/public-apis-README.md", "table", 52, 52],
    ["md/public-apis-README.md", "a[href]", 1701, Infinity],
    ["html/readability-v8-blog.html", "h1, h2, h3", 6, Infinity],
    ["html/readability-v8-blog.html", "pre", 10, 10],
    ["html/readability-ietf-1.htm", "pre", 22, 22],
  ])("%s keeps %s elements", async (file, selector, atLeast, atMost) => {
    const count = (await convert(file)).$(selector).length;
    expect(count).toBeGreaterThanOrEqual(atLeast);
    expect(count).toBeLessThanOrEqual(atMost);
  });

  it("readability-links-in-tables: the 7x4 article table", async () => {
    const { $ } = await convert("html/readability-links-in-tables.html");
    expect(shapes($)).toContain("7x4");
  });

  it("txt: Windows-1252 quotes, UTF-8 without BOM, CRLF chapters", async () => {
    expect((await convert("txt/tika-testTXT_win-1252.txt")).result.html).toMatch(/[\u201c\u201d]/);
    expect((await convert("txt/tika-testTXTNonASCIIUTF8.txt")).result.warnings).toEqual([]);
    const alice = await convert("txt/snappy-alice29.txt");
    expect(alice.$("h2").length).toBeGreaterThanOrEqual(12);
    expect(alice.result.html).not.toContain("\r");
  });
});
