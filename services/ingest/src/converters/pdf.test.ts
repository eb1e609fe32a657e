import { existsSync } from "node:fs";
import { InputError } from "@redline/service-kit";
import { afterAll, describe, expect, it } from "vitest";
import { closeBrowser, printPdf } from "../export/to-pdf.js";
import { readCorpus } from "../testing/corpus.js";
import { convertPdf } from "./pdf.js";
import { alignedTable, flowToHtml, Hyphenation, runningParts } from "./pdf-flow.js";
import { type LayoutLine, pageText, type TextItem } from "./pdf-layout.js";

describe("pdf converter", () => {
  it("extracts the text of the 'various' PDF with page setup", async () => {
    const result = await convertPdf(readCorpus("pdf/tika-testPDFVarious.pdf"), "tika-testPDFVarious.pdf");
    expect(result.format).toBe("pdf");
    const texts = [
      "Here is a numbered list:",
      "Bullet 1",
      "This is a hyperlink",
      "Row 1 Col 1",
      "ゾルゲと尾崎、淡々と最期",
    ];
    for (const text of texts) expect(result.html).toContain(text);
    expect(result.pageSetup).toMatchObject({ size: "Letter", orientation: "portrait" });
    // Margins are estimated from the text area: about an inch on the left of this Word PDF.
    expect(result.pageSetup?.margins?.left).toBeCloseTo(1, 0);
    expect(result.warnings[0]).toMatch(/without fonts and images/);
  });

  it("reflows prose lines into paragraphs and takes the title from metadata", async () => {
    const result = await convertPdf(readCorpus("pdf/irs-fd_ins_8863-2013.pdf"), "irs.pdf");
    expect(result.title).toBe("2013 Instructions for Form 8863");
    expect(result.html).toContain("<p>Section references are to the Internal Revenue Code unless otherwise noted.</p>");
  });

  it("refuses an encrypted PDF that needs a password", async () => {
    const err = await convertPdf(readCorpus("pdf/pdf2json-i43_err_encrypted.pdf"), "enc.pdf").catch((e: unknown) => e);
    expect(err).toBeInstanceOf(InputError);
    expect((err as Error).message).toMatch(/encrypted, needs a password/);
  });

  it("opens a PDF that has only an owner password", async () => {
    const result = await convertPdf(readCorpus("pdf/tika-testPDF_protected-ownerpw.pdf"), "speech.pdf");
    expect(result.html).toContain("RETHINKING THE FINANCIAL NETWORK");
    expect(result.pageSetup?.size).toBe("A4");
  });

  it("answers a malformed PDF with a 400 or an empty result with a warning, never a crash", async () => {
    const outcome = await convertPdf(readCorpus("pdf/pdf2json-i243_err_file_anon-broken-xref.pdf"), "broken.pdf").then(
      (r) => ({ ok: true as const, r }),
      (e: unknown) => ({ ok: false as const, e }),
    );
    if (outcome.ok) {
      expect(outcome.r.html).toBe("");
      expect(outcome.r.warnings.some((w) => /No text could be extracted/.test(w))).toBe(true);
    } else {
      expect(outcome.e).toBeInstanceOf(InputError);
    }
  });

  it("refuses bytes that are not a PDF", async () => {
    await expect(convertPdf(Buffer.from("hello"), "x.pdf")).rejects.toThrow(/not a PDF/);
  });
});

describe("pdf reading order", () => {
  it("reads a two-column page written row by row column after column", () => {
    const items: TextItem[] = [
      { str: "A title across both columns of the page", x: 100, y: 740, width: 400, height: 14 },
    ];
    for (let row = 0; row < 12; row++) {
      const y = 700 - row * 14;
      items.push(
        { str: `Left line ${row} of the first column prose`, x: 50, y, width: 220, height: 10 },
        { str: `Right line ${row} of the second column prose`, x: 320, y, width: 220, height: 10 },
      );
    }
    const lines = pageText(items, 612)
      .split("\n")
      .filter((l) => l !== "");
    expect(lines[0]).toBe("A title across both columns of the page");
    expect(lines.slice(1, 13).every((l) => l.startsWith("Left"))).toBe(true);
    expect(lines.slice(13).every((l) => l.startsWith("Right"))).toBe(true);
  });

  it("keeps the content order of a two-column PDF written column by column (tracemonkey)", async () => {
    const result = await convertPdf(readCorpus("pdf/pdfjs-tracemonkey.pdf"), "tracemonkey.pdf");
    const abstract = result.html.indexOf("Dynamic languages such as JavaScript are more difficult to com");
    const rightColumn = result.html.indexOf("and is used for the application logic of browser-based productivity");
    expect(abstract).toBeGreaterThan(0);
    expect(rightColumn).toBeGreaterThan(abstract);
    // The left column's abstract is one paragraph, not interleaved with the right column.
    expect(result.html).toMatch(
      /<p>Dynamic languages such as JavaScript are more difficult to com-?pile than statically typed ones\./,
    );
  });
});

/** A one-cell line as pdf-layout.ts makes it (points, y up), for the flow's pure functions. */
function line(text: string, y: number, extra: Partial<LayoutLine> = {}): LayoutLine {
  const left = extra.left ?? 72;
  const right = extra.right ?? left + text.length * 5;
  return {
    kind: "line",
    text,
    y,
    height: 10,
    left,
    right,
    bold: false,
    cells: [{ text, left, right }],
    column: -1,
    breakBefore: "none",
    ...extra,
  };
}

describe("pdf running headers and footers", () => {
  it("takes a line repeated at the top or bottom of most pages out once; page numbers are dropped", () => {
    const pages = [1, 2, 3].map((n) => ({
      height: 792,
      entries: [
        line("ACME Annual Report", 750),
        line(`Body of page ${n}.`, 600),
        line("More text.", 580),
        line(`Page ${n}`, 40),
      ],
    }));
    const parts = runningParts(pages);
    expect(parts.headers).toEqual(["ACME Annual Report"]);
    expect(parts.footers).toEqual([]);
    expect(parts.pages[1].map((e) => (e.kind === "line" ? e.text : ""))).toEqual(["Body of page 2.", "More text."]);
  });

  it("keeps a repeated table header row with its table, and the 'various' PDF header and footer become parts", async () => {
    const row = (y: number) => {
      const l = line("A\tB\tC", y);
      l.cells = [
        { text: "A", left: 72, right: 80 },
        { text: "B", left: 200, right: 208 },
        { text: "C", left: 300, right: 308 },
      ];
      return l;
    };
    expect(runningParts([1, 2].map(() => ({ height: 792, entries: [row(750)] }))).headers).toEqual([]);
    const result = await convertPdf(readCorpus("pdf/tika-testPDFVarious.pdf"), "various.pdf");
    expect(result.html.startsWith('<p data-part="header" data-variant="default">This is the header text.</p>')).toBe(
      true,
    );
    expect(result.html.endsWith('<p data-part="footer" data-variant="default">This is the footer text.</p>')).toBe(
      true,
    );
    expect(result.html.match(/This is the header text\./g)).toHaveLength(1);
    expect(result.html.match(/This is the footer text\./g)).toHaveLength(1);
  });
});

describe("pdf corpus: parts, tables, headings, joins", () => {
  it("tika-testPDFVarious: the 2x3 table is rebuilt from its ruling lines", async () => {
    const result = await convertPdf(readCorpus("pdf/tika-testPDFVarious.pdf"), "various.pdf");
    expect(result.html).toContain(
      "<table><tbody><tr><td>Row 1 Col 1</td><td>Row 1 Col 2</td><td>Row 1 Col 3</td></tr><tr><td>Row 2 Col 1</td><td>Row 2 Col 2</td><td>Row 2 Col 3</td></tr></tbody></table>",
    );
  });

  it("irs 8863: headings, Table 1 rebuilt, a paragraph joined across the column break, the footer once", async () => {
    const { html } = await convertPdf(readCorpus("pdf/irs-fd_ins_8863-2013.pdf"), "irs.pdf");
    expect(html).toContain("<h1>Instructions for Form 8863</h1>");
    for (const h of [
      "General Instructions",
      "Purpose of Form",
      "Who Can Claim an Education Credit",
      "Specific Instructions",
    ])
      expect(html).toMatch(new RegExp(`<h2>${h}</h2>`));
    expect(html).toContain(
      "<tr><td>Maximum credit</td><td>Up to $2,500 credit per eligible student</td><td>Up to $2,000 credit per return</td></tr>",
    );
    expect(html).toContain(
      "<p>Qualified education expenses for any academic period must be reduced by any tax-free educational assistance allocable to that academic period. See Adjusted Qualified Education Expenses, later.</p>",
    );
    // The running footer ("-2- Instructions for Form 8863 (2013)" on facing pages) is one part, page numbers gone.
    expect(html).toContain('<p data-part="footer" data-variant="default">Instructions for Form 8863 (2013)</p>');
    expect(html.match(/Instructions for Form 8863 \(2013\)/g)).toHaveLength(1);
  });

  it("tracemonkey: section headings by size and weight, and no split word the paper writes whole elsewhere", async () => {
    const { html } = await convertPdf(readCorpus("pdf/pdfjs-tracemonkey.pdf"), "tracemonkey.pdf");
    expect(html).toContain("<h1>Trace-based Just-in-Time Type Specialization for Dynamic Languages</h1>");
    for (const h of ["1. Introduction", "2. Overview: Example Tracing Run", "9. Conclusions", "References"])
      expect(html).toContain(`<h2>${h}</h2>`);
    for (const h of ["3.1 Traces", "6.4 Preemption"]) expect(html).toContain(`<h3>${h}</h3>`);
    // Line-end splits the paper writes whole elsewhere are joined ("run-time" and "control-flow"
    // are written so mid-line too, and stay); compounds stay.
    for (const joined of ["difficult to compile than", "an alternative compilation", "the actual dynamic types"])
      expect(html).toContain(joined);
    for (const split of ["com-pile", "al-ternative", "Trace-Monkey", "TraceMon-key", "Sun-Spider"])
      expect(html).not.toContain(split);
    expect(html).toContain("accessible to non-experts");
    // A paragraph cut by the column break (and a footnote under the column) reads on.
    expect(html).toContain("client-side web programming and is used for the application logic");
  });
});

describe("pdf hyphenation from the document's own words", () => {
  const h = new Hyphenation([
    "Lorem ipsum dolor sit amet, consectetur adipiscing elit.",
    "A well-known result, a self-evident one.",
    "the x axis and the tree cover",
  ]);
  it("joins a split word the document writes whole elsewhere", () => {
    expect(h.join("consectetur adip-", "iscing elit")).toBe("consectetur adipiscing elit");
  });
  it("keeps compounds the document writes with a hyphen, capitals and one-letter stems", () => {
    expect(h.join("a well-", "known fact")).toBe("a well-known fact");
    expect(h.join("the Franco-", "German border")).toBe("the Franco-German border");
    expect(h.join("the x-", "axis")).toBe("the x-axis");
    // Both halves are words here, the joined form is not: a compound.
    expect(h.join("the tree-", "cover")).toBe("the tree-cover");
  });
  it("joins syllables when there is no evidence either way, and always at a soft hyphen", () => {
    expect(h.join("a com-", "pilation")).toBe("a compilation");
    expect(h.join("a well\u00ad", "spring")).toBe("a wellspring");
  });
});

describe("pdf flow: paragraphs, headings, aligned tables", () => {
  /** A justified column of lines (left 72..300): every line but the last is full. */
  const column = (texts: string[], top: number, extra: Partial<LayoutLine> = {}) =>
    texts.map((t, i) =>
      line(t, top - i * 12, { left: 72, right: i === texts.length - 1 && !extra.right ? 200 : 300, ...extra }),
    );

  it("joins a paragraph across a column break when it stops mid-sentence at the column's edge", () => {
    const left = column(["First paragraph line one goes on here and on for a while", "and it ends here."], 700);
    const second = column(
      ["Second paragraph starts and runs all the way to the", "edge of the column without any stop at all and"],
      600,
      {
        right: 300,
      },
    );
    second[0].breakBefore = "para";
    const right = column(
      ["then it goes on in the next column, where it goes on and", "ends in the right column."],
      700,
      {
        left: 320,
        column: 1,
      },
    );
    for (const l of right) {
      l.left = 320;
      l.right = l.right === 200 ? 420 : 530;
      l.column = 1;
    }
    right[0].breakBefore = "column";
    const blocks = flowToHtml([[...left, ...second, ...right]]);
    expect(blocks).toEqual([
      "<p>First paragraph line one goes on here and on for a while and it ends here.</p>",
      "<p>Second paragraph starts and runs all the way to the edge of the column without any stop at all and then it goes on in the next column, where it goes on and ends in the right column.</p>",
    ]);
  });

  it("does not join across a page break after terminal punctuation", () => {
    const page1 = column(
      ["A paragraph that fills the line all the way to the", "edge of the column and stops with a full stop here."],
      200,
      {
        right: 300,
      },
    );
    const page2 = column(
      [
        "A new paragraph on the next page, in the same column width",
        "as the paragraph on the page before it, and it",
        "is short.",
      ],
      700,
    );
    expect(flowToHtml([page1, page2])).toEqual([
      "<p>A paragraph that fills the line all the way to the edge of the column and stops with a full stop here.</p>",
      "<p>A new paragraph on the next page, in the same column width as the paragraph on the page before it, and it is short.</p>",
    ]);
  });

  it("finds headings by size rank and a lone bold line, not every bold line", () => {
    const body = (t: string, y: number) => line(t, y, { right: 300 });
    const lines = [
      line("Annual Report", 760, { height: 20 }),
      body("Body text that is long enough to be prose in this column.", 730),
      body("More body text that is long enough to be prose here too.", 718),
      line("Results", 690, { height: 14 }),
      line("Method notes", 660, { bold: true, right: 150 }),
      body("Body text after the bold heading, set in the body size.", 646),
      line("Bold run-in sentence that reaches the column edge and", 620, {
        bold: true,
        right: 300,
        breakBefore: "para",
      }),
      body("continues in roman type on the next line of the paragraph.", 608),
    ];
    lines[3].breakBefore = "para";
    lines[4].breakBefore = "para";
    const blocks = flowToHtml([lines]);
    expect(blocks[0]).toBe("<h1>Annual Report</h1>");
    expect(blocks).toContain("<h2>Results</h2>");
    expect(blocks).toContain("<h3>Method notes</h3>");
    expect(blocks.filter((b) => b.startsWith("<h"))).toHaveLength(3);
  });

  it("rebuilds a table from rows whose cells line up, and leaves two rows or prose with a wide gap alone", () => {
    const row = (y: number, cells: string[]) => {
      const l = line(cells.join("\t"), y);
      l.cells = cells.map((text, k) => ({ text, left: 72 + k * 150, right: 72 + k * 150 + text.length * 5 }));
      return l;
    };
    const rows = [
      row(700, ["Region", "Sales", "Growth"]),
      row(688, ["North", "120", "4%"]),
      row(676, ["South", "95", "2%"]),
    ];
    expect(alignedTable(rows)).toEqual([
      ["Region", "Sales", "Growth"],
      ["North", "120", "4%"],
      ["South", "95", "2%"],
    ]);
    expect(alignedTable(rows.slice(0, 2))).toBeNull();
    const prose = [0, 1, 2].map((k) =>
      row(600 - k * 12, [
        "A long sentence of running prose that happens to have",
        "a wide gap in it, which does not make it a table row",
      ]),
    );
    expect(alignedTable(prose)).toBeNull();
  });
});

// Ground truth from Chromium: a page laid out with known lines (each line its own justified
// block, so line ends, hyphens and column breaks fall exactly where written).
const hasChromium = ["/usr/bin/chromium", "/usr/bin/chromium-browser", "/usr/bin/google-chrome"].some((p) =>
  existsSync(p),
);

/** One paragraph whose lines are exactly `lines` (every line, the last too, fills the width). */
const exactLines = (lines: string[]) =>
  `<div class="p">${lines.map((l) => `<div class="l">${l}</div>`).join("")}</div>`;
const FILLER = [
  "Quarterly figures are gathered from",
  "every regional office and checked",
  "against the ledgers before they are",
  "published, so the totals agree.",
];
const COLUMN_PARAGRAPH = [
  "The second paragraph starts near the",
  "foot of the first column and keeps",
  "going: lorem ipsum dolor sit, adip-",
  "iscing elit, sed do eiusmod tempor",
  "incididunt ut labore et dolore, with",
  "a result that is by now well-",
  "known to the readers of the earlier",
  "reports, and that runs on into the",
  "second column of the page without",
  "a break in its sentence until it",
  "reaches the second column, where it",
  "goes on for a few more lines and",
  "finally ends with a full stop here.",
];
const WORDS = "each office reports its sales and costs with staff numbers for the quarter to the head office".split(
  " ",
);
/** Varied full-width lines (repeated lines would line their word gaps up into a false gutter). */
const longLine = (i: number) => {
  const words: string[] = [];
  for (let k = i; words.join(" ").length < 74; k++) words.push(WORDS[(k * 7) % WORDS.length]);
  return `${words.join(" ")} ${i + 1}`;
};

function groundTruthPage(): string {
  const css = `
    body { font-family: "DejaVu Sans", sans-serif; font-size: 12px; line-height: 16px; margin: 0; }
    h1 { font-size: 26px; line-height: 32px; margin: 0 0 12px; }
    h2 { font-size: 19px; line-height: 24px; margin: 12px 0; }
    .l { text-align: justify; text-align-last: justify; white-space: normal; }
    .p { margin: 0 0 14px; }
    .cols { column-count: 2; column-gap: 40px; column-fill: auto; height: 192px; margin-bottom: 14px; }
    table.ruled { border-collapse: collapse; margin: 0 0 14px; }
    table.ruled td { border: 1px solid #000; padding: 3px 8px; }
    table.plain td { padding: 0 48px 0 0; }
    table.plain { margin: 0 0 14px; }
    .bold { font-weight: bold; margin: 0 0 14px; }`;
  const longParagraph = Array.from({ length: 48 }, (_, i) => longLine(i));
  longParagraph[47] = "and this is where the long paragraph finally comes to an end.";
  const body = [
    "<h1>Quarterly Report</h1>",
    exactLines([
      "Lorem ipsum dolor sit amet, consectetur adipiscing elit, said the first line of the",
      "opening paragraph, a well-known text that ends on its second line.",
    ]),
    `<table class="ruled"><tr><td>Region</td><td>Sales</td><td>Staff</td></tr><tr><td>North</td><td>1,200</td><td>14</td></tr><tr><td>South</td><td>950</td><td>11</td></tr><tr><td>Notes</td><td>sepa-<br>rately</td><td>well-<br>known</td></tr></table>`,
    '<div class="bold">Method notes</div>',
    `<table class="plain"><tr><td>Quarter</td><td>Revenue</td><td>Margin</td></tr><tr><td>Q1</td><td>410</td><td>12%</td></tr><tr><td>Q2</td><td>455</td><td>14%</td></tr><tr><td>Q3</td><td>470</td><td>15%</td></tr></table>`,
    exactLines(longParagraph),
    // A page of two columns (the layout reads columns by a gutter found per page).
    '<h2 style="break-before: page">Regional detail</h2>',
    `<div class="cols">${exactLines(FILLER)}${exactLines(COLUMN_PARAGRAPH)}${exactLines(["A closing paragraph sits at the", "end of the second column."])}</div>`,
  ].join("\n");
  return `<!doctype html><html><head><meta charset="utf-8"><style>${css}</style></head><body>${body}</body></html>`;
}

describe.skipIf(!hasChromium)("pdf import against a Chromium-printed page with known layout", () => {
  afterAll(async () => {
    await closeBrowser();
  });

  it("rebuilds parts, headings, both kinds of table, hyphens and paragraphs across columns and pages", async () => {
    const template = (text: string) =>
      `<div style="font-size:9px;width:100%;padding:0 1in;display:flex;justify-content:space-between"><span>${text}</span><span class="pageNumber"></span></div>`;
    const pdf = await printPdf(
      {
        page: groundTruthPage(),
        headerTemplate: template("ACME Quarterly Report"),
        footerTemplate: template("Confidential"),
        displayHeaderFooter: true,
      },
      {
        widthIn: 8.5,
        heightIn: 11,
        orientation: "portrait",
        margins: { top: 1, right: 1, bottom: 1, left: 1 },
        paperName: "Letter",
      },
    );
    const { html } = await convertPdf(pdf, "report.pdf");
    const blocks = html.split("\n");
    // Running parts: once each, first and last, page numbers dropped.
    expect(blocks[0]).toBe('<p data-part="header" data-variant="default">ACME Quarterly Report</p>');
    expect(blocks.at(-1)).toBe('<p data-part="footer" data-variant="default">Confidential</p>');
    expect(html.match(/ACME Quarterly Report/g)).toHaveLength(1);
    expect(html.match(/Confidential/g)).toHaveLength(1);
    // Headings by size, and a lone bold line at body size.
    expect(blocks).toContain("<h1>Quarterly Report</h1>");
    expect(blocks).toContain("<h2>Regional detail</h2>");
    expect(blocks).toContain("<h3>Method notes</h3>");
    expect(blocks.filter((b) => /^<h\d/.test(b))).toHaveLength(3);
    // The ruled table and the aligned one, cell for cell; a cell's line-end hyphen follows the
    // body's rule ("sepa-rately" joins, "well-known" is written so in the text and stays).
    expect(blocks).toContain(
      "<table><tbody><tr><td>Region</td><td>Sales</td><td>Staff</td></tr><tr><td>North</td><td>1,200</td><td>14</td></tr><tr><td>South</td><td>950</td><td>11</td></tr><tr><td>Notes</td><td>separately</td><td>well-known</td></tr></tbody></table>",
    );
    expect(blocks).toContain(
      "<table><tbody><tr><td>Quarter</td><td>Revenue</td><td>Margin</td></tr><tr><td>Q1</td><td>410</td><td>12%</td></tr><tr><td>Q2</td><td>455</td><td>14%</td></tr><tr><td>Q3</td><td>470</td><td>15%</td></tr></tbody></table>",
    );
    // The paragraph that crosses the column break is one paragraph; "adip-" joins ("adipiscing"
    // is written whole above), "well-known" keeps its hyphen.
    const joined = COLUMN_PARAGRAPH.join(" ")
      .replace("adip- iscing", "adipiscing")
      .replace("well- known", "well-known");
    expect(blocks).toContain(`<p>${joined}</p>`);
    expect(blocks).toContain(`<p>${FILLER.join(" ")}</p>`);
    // The long paragraph crosses the page break in one piece.
    const long = Array.from({ length: 47 }, (_, i) => longLine(i)).join(" ");
    expect(blocks).toContain(`<p>${long} and this is where the long paragraph finally comes to an end.</p>`);
  });
});
