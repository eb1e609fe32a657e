// PDF fidelity on documents the layout rules were not tuned on (issue #32): paragraphs across
// page and column breaks with the running footer between, ranges broken at their hyphen,
// superscript marks kept apart, reading order of two-column pages with full-width figures, and
// characters through the font's ToUnicode map. Real corpus files, a Chromium-printed page and a
// PDF written here byte by byte.
import { existsSync } from "node:fs";
import { afterAll, describe, expect, it } from "vitest";
import { closeBrowser, printPdf } from "../export/to-pdf.js";
import { readCorpus } from "../testing/corpus.js";
import { convertPdf } from "./pdf.js";
import { markedSpans } from "./pdf-actual-text.js";

const blocksOf = (html: string) => html.split("\n");
/** The paragraph (or other block) holding `text`. */
const blockWith = (html: string, text: string) => blocksOf(html).find((b) => b.includes(text));

describe("pdf flow on the corpus", () => {
  it("speech: a ragged-right paragraph crosses the page break with the page number between", async () => {
    const { html } = await convertPdf(readCorpus("pdf/tika-testPDF_protected-ownerpw.pdf"), "speech.pdf");
    // Page 2 ends "… investment banks. Professor Paul", page 3 starts "Krugman, Nobel prize …",
    // with the page number "2" in the footer band between.
    expect(blockWith(html, "Professor Paul")).toContain("Professor Paul Krugman, Nobel prize winner in economics");
    expect(html).not.toMatch(/<p>Krugman, Nobel/);
    // A range broken at its hyphen keeps the hyphen and loses the space.
    expect(html).toContain("Over the period 1950-2003, the incidence");
    // Footnote marks are superscripts beside the words they follow, not part of them.
    expect(html).toContain("and inter-bank networks.<sup>1</sup>");
    expect(html).toContain("in the 19<sup>th</sup> century");
  });

  it("tracemonkey: columns beside a figure or under a full-width listing are read as columns", async () => {
    const { html } = await convertPdf(readCorpus("pdf/pdfjs-tracemonkey.pdf"), "tracemonkey.pdf");
    // Page 2: the right column holds a state diagram of short labels.
    expect(html).toContain(
      "<p>Every compiled trace contains all the guards (checks) required to validate the speculation. If one of the guards fails (if control flow is different, or a value of a different type is generated), the trace exits.",
    );
    // Page 3: two listings and their captions run across the page above the two columns; the
    // left column's last paragraph goes on at the top of the right one.
    expect(
      blockWith(html, "The result is a native code fragment that can be entered if the interpreter PC"),
    ).toBeDefined();
    expect(html).toContain(
      "<p>i=2. This is the first iteration of the outer loop. The loop on lines 4-5 becomes hot on its second iteration, so TraceMonkey enters recording mode on line 4.",
    );
    // Subscripts of the paper's notation.
    expect(html).toContain("The first trace in our example, T<sub>45</sub>, covers lines 4 and 5.");
  });

  it("the 'various' PDF: the footnote reference and the formatted words are marks, not text", async () => {
    const { html } = await convertPdf(readCorpus("pdf/tika-testPDFVarious.pdf"), "various.pdf");
    expect(html).toContain("<p>Footnote appears here<sup>1</sup></p>");
    expect(html).toContain("<sup>superscript</sup> <sub>subscript</sub>");
  });
});

// A PDF written here byte by byte: one page in a Type 3 font (glyphs are filled boxes) whose
// ToUnicode map gives two flags, an emoji and two ligatures; one more glyph has no mapping.
function handBuiltPdf(): Buffer {
  const stream = (body: string) => `<< /Length ${Buffer.byteLength(body, "latin1")} >>\nstream\n${body}\nendstream`;
  const cmap = [
    "/CIDInit /ProcSet findresource begin 12 dict begin begincmap",
    "/CIDSystemInfo << /Registry (Adobe) /Ordering (UCS) /Supplement 0 >> def",
    "/CMapName /Redline-Test-UCS def /CMapType 2 def",
    "1 begincodespacerange <00> <FF> endcodespacerange",
    "5 beginbfchar",
    "<01> <D83CDDE9D83CDDEA>",
    "<02> <D83CDDEBD83CDDF7>",
    "<03> <D83DDE00>",
    "<04> <FB01>",
    "<05> <0066006C>",
    "endbfchar",
    "1 beginbfrange <20> <7A> <0020> endbfrange",
    "endcmap CMapName currentdict /CMap defineresource pop end end",
  ].join("\n");
  const text = "(Flags \\001 \\002 and a smile \\003 in the \\004le on the \\005oor \\006 end) Tj";
  const names = ["g1", "g2", "g3", "g4", "g5", "g6"];
  const letters = Array.from({ length: 0x7a - 0x20 + 1 }, (_, i) => `/c${i + 0x20}`).join(" ");
  const procs = [...names, ...Array.from({ length: 0x7a - 0x20 + 1 }, (_, i) => `c${i + 0x20}`)]
    .map((n) => `/${n} 8 0 R`)
    .join(" ");
  const objects = [
    "<< /Type /Catalog /Pages 2 0 R >>",
    "<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
    "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 5 0 R >> >> /Contents 4 0 R >>",
    stream(`BT /F1 12 Tf 72 700 Td ${text} ET`),
    `<< /Type /Font /Subtype /Type3 /FontMatrix [0.001 0 0 0.001 0 0] /FontBBox [0 0 500 700] /CharProcs 7 0 R /Encoding << /Type /Encoding /Differences [1 ${names.map((n) => `/${n}`).join(" ")} 32 ${letters}] >> /FirstChar 1 /LastChar 122 /Widths [${Array(122).fill(500).join(" ")}] /Resources << >> /ToUnicode 6 0 R >>`,
    stream(cmap),
    `<< ${procs} >>`,
    stream("500 0 0 0 500 700 d1 0 0 500 700 re f"),
  ];
  let out = "%PDF-1.7\n";
  const offsets: number[] = [];
  objects.forEach((o, i) => {
    offsets.push(Buffer.byteLength(out, "latin1"));
    out += `${i + 1} 0 obj\n${o}\nendobj\n`;
  });
  const xref = Buffer.byteLength(out, "latin1");
  const entries = offsets.map((o) => `${String(o).padStart(10, "0")} 00000 n \n`).join("");
  out += `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n${entries}`;
  out += `trailer\n<< /Size ${objects.length + 1} /Root 1 0 R >>\nstartxref\n${xref}\n%%EOF\n`;
  return Buffer.from(out, "latin1");
}

describe("pdf characters through the font's ToUnicode map", () => {
  it("keeps flags, emoji and ligatures, and leaves out a glyph with no Unicode meaning (with a warning)", async () => {
    const { html, warnings } = await convertPdf(handBuiltPdf(), "flags.pdf");
    expect(html).toBe("<p>Flags 🇩🇪 🇫🇷 and a smile 😀 in the file on the floor end</p>");
    // biome-ignore lint/suspicious/noControlCharactersInRegex: no control character may be left.
    expect(html).not.toMatch(/[\u0000-\u0008\ue000-\uf8ff]/u);
    expect(warnings).toContain(
      "1 character of the PDF had no Unicode meaning in its fonts (symbols or emoji the file does not map) and was left out",
    );
  });
});

describe("pdf /ActualText spans", () => {
  it("lists a content stream's BDC operators with their ActualText, strings and inline images skipped", () => {
    const content = [
      "BT /F1 12 Tf (a \\(BDC\\) string) Tj",
      "/Span <</ActualText <FEFFD83CDDE9D83CDDEA>>> BDC <0000> Tj EMC",
      "/P <</MCID 3>> BDC (plain) Tj EMC",
      "/Span <</ActualText (caf\\351 \\(1\\))>> BDC <0001> Tj EMC",
      "/Artifact BMC EMC ET",
      "BI /W 1 /H 1 /BPC 8 /CS /G ID \u0000BDC\u00ff EI",
      "/Span /MC0 BDC EMC % a comment: /ActualText (no) BDC",
    ].join("\n");
    expect(markedSpans(content)).toEqual(["🇩🇪", null, "café (1)", null]);
  });
});

const hasChromium = ["/usr/bin/chromium", "/usr/bin/chromium-browser", "/usr/bin/google-chrome"].some((p) =>
  existsSync(p),
);

const SENTENCE_WORDS =
  "the regional offices report their sales and their costs to the head office which checks them against the ledgers and the bank statements".split(
    " ",
  );

describe.skipIf(!hasChromium)("pdf flow against a Chromium-printed document", () => {
  afterAll(async () => {
    await closeBrowser();
  });

  it("joins a ragged-right paragraph across the page break and keeps footnote marks apart", async () => {
    // One sentence long enough to run from page 1 onto page 2 (no full stop before its end).
    const words: string[] = [];
    for (let i = 0; words.length < 900; i++) words.push(SENTENCE_WORDS[(i * 7) % SENTENCE_WORDS.length]);
    const sentence = `This long paragraph begins here and ${words.join(" ")} and it ends at last.`;
    const css = `body { font-family: "DejaVu Sans", sans-serif; font-size: 12px; line-height: 16px; margin: 0; }
      p { margin: 0 0 14px; text-align: left; }
      td { border: 1px solid #000; padding: 3px 8px; } table { border-collapse: collapse; margin: 0 0 14px; }`;
    const body = [
      "<p>The audited total was 1273.87<sup>9</sup> euros, the 12<sup>th</sup> year in a row.</p>",
      // No installed font has flags: Chromium draws a blank glyph and says what it is in /ActualText.
      "<p>Offices in 🇩🇪 and 🇫🇷 report.</p>",
      `<table><tr><td>Item</td><td>Amount</td></tr><tr><td>Total</td><td>1273.87<sup>9</sup></td></tr><tr><td>Fees</td><td>18.20</td></tr></table>`,
      `<p>${sentence}</p>`,
      "<p>A closing paragraph.</p>",
    ].join("");
    const pdf = await printPdf(
      {
        page: `<!doctype html><html><head><meta charset="utf-8"><style>${css}</style></head><body>${body}</body></html>`,
        headerTemplate: "<span></span>",
        footerTemplate:
          '<div style="font-size:9px;width:100%;text-align:center"><span class="pageNumber"></span></div>',
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
    const blocks = blocksOf(html);
    expect(blocks).toContain(
      "<p>The audited total was 1273.87<sup>9</sup> euros, the 12<sup>th</sup> year in a row.</p>",
    );
    expect(html).toContain("<td>1273.87<sup>9</sup></td>");
    expect(html).not.toContain("1273.879");
    expect(blocks).toContain("<p>Offices in 🇩🇪 and 🇫🇷 report.</p>");
    // The sentence is one paragraph: the page number between its halves is gone.
    expect(blocks).toContain(`<p>${sentence}</p>`);
    expect(blocks).toContain("<p>A closing paragraph.</p>");
  });
});
