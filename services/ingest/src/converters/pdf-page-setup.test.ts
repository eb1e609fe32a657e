import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { exportDocument } from "../commands/export-document.js";
import { convertDocument } from "../convert.js";
import { closeBrowser } from "../export/to-pdf.js";
import { DEFAULT_LIMITS, type PageMargins, type PageSetup } from "../formats.js";
import { ConverterPool } from "../sandbox/pool.js";
import { readCorpus } from "../testing/corpus.js";
import { convertDocx } from "./docx.js";
import { convertPdf } from "./pdf.js";
import { estimateMargins, type PageGeometry, pdfPageSetup, type TextBox } from "./pdf-page-setup.js";

// Copies of /work/shared/corpus files, kept in the repository so a fresh clone runs this alone.
const fixture = readCorpus;

const TOLERANCE_IN = 0.1;
/**
 * For Redline's own PDFs: the text sits on the page margin itself, give or take the first line's
 * half-leading (0.02 in at 12 pt); Chromium's 8 px body margin (0.08 in) once sat inside it.
 */
const OWN_EXPORT_TOLERANCE_IN = 0.03;
const SIDES = ["top", "right", "bottom", "left"] as const;

/** Every margin within `tolerance` in (default 0.1) of the expected one; margins are inches. */
function expectMargins(actual: PageMargins | null | undefined, expected: PageMargins, tolerance = TOLERANCE_IN) {
  expect(actual).toBeTruthy();
  for (const side of SIDES)
    expect(
      Math.abs((actual as PageMargins)[side] - expected[side]),
      `${side}: ${JSON.stringify(actual)}`,
    ).toBeLessThanOrEqual(tolerance);
}

const pool = new ConverterPool({ size: 1 });
afterAll(async () => {
  await pool.close();
  await closeBrowser();
});

/** The document exported as PDF by Redline's own export (sanitize, print page, Chromium). */
async function exportPdf(html: string, pageSetup: PageSetup): Promise<Buffer> {
  const file = await exportDocument(
    { html, format: "pdf", title: "Round trip", pageSetup, options: {} },
    {
      maxBytes: { docx: 1e8, pdf: 1e8, html: 1e8, markdown: 1e8, txt: 1e8 },
      supportEmail: "support@redline.local",
      resolveImage: async () => null,
      pool,
    },
  );
  expect(file.contentType).toBe("application/pdf");
  return file.bytes;
}

// The margins are read from where the text stops, so the document must reach them: justified
// lines end exactly at the right margin, and with several pages of text every page but the last
// ends within a line of the bottom margin. Paragraphs of varied length, so that widow control
// (a paragraph's last two lines kept together) does not end every page a line early the same way.
const SENTENCE =
  "Redline keeps the page geometry of a document when it travels through a PDF, so a contract printed here reads back with its margins. ";
const FILLED_BODY = Array.from(
  { length: 24 },
  (_, i) => `<p style="text-align: justify">${i + 1}. ${SENTENCE.repeat(2 + (i % 4))}</p>`,
).join("\n");

describe("pdf page setup: round trip through Redline's PDF export (Chromium)", () => {
  it.each<[string, PageSetup, string]>([
    [
      "Letter, 1 in margins, with a running header and footer",
      { size: "Letter", orientation: "portrait", margins: { top: 1, right: 1, bottom: 1, left: 1 } },
      // Chromium prints the parts in the margins of every page; the margin is to the body.
      `<p data-part="header" data-variant="default">Master services agreement</p>\n${FILLED_BODY}\n<p data-part="footer" data-variant="default">Confidential</p>`,
    ],
    [
      "A4 landscape, 0.75 in top/bottom and 1.25 in sides",
      { size: "A4", orientation: "landscape", margins: { top: 0.75, right: 1.25, bottom: 0.75, left: 1.25 } },
      FILLED_BODY,
    ],
    [
      "Legal, the moderate preset (1 in top/bottom, 0.75 in sides)",
      { size: "Legal", orientation: "portrait", margins: { top: 1, right: 0.75, bottom: 1, left: 0.75 } },
      FILLED_BODY,
    ],
  ])("%s", async (_name, setup, html) => {
    const pdf = await exportPdf(html, setup);
    const result = await convertDocument("round-trip.pdf", pdf, {}, pool);
    expect(result.pageSetup?.size).toBe(setup.size);
    expect(result.pageSetup?.orientation).toBe(setup.orientation);
    expectMargins(result.pageSetup?.margins, setup.margins as PageMargins, OWN_EXPORT_TOLERANCE_IN);
  });

  it("reads a one-paragraph memo with its real margins, not the gap to where its text ends (issue #11: 6.75/8.95 in)", async () => {
    const setup: PageSetup = {
      size: "Letter",
      orientation: "portrait",
      margins: { top: 1, right: 1, bottom: 1, left: 1 },
    };
    const pdf = await exportPdf("<p>Please find the signed agreement attached.</p>", setup);
    const margins = (await convertPdf(pdf, "memo.pdf")).pageSetup?.margins;
    // The text reaches neither the right nor the bottom margin: they mirror left and top.
    expect(margins?.right).toBe(margins?.left);
    expect(margins?.bottom).toBe(margins?.top);
    expect(Math.abs((margins?.left ?? 0) - 1)).toBeLessThanOrEqual(OWN_EXPORT_TOLERANCE_IN);
    // Chromium keeps the first paragraph's 12 pt CSS margin on page 1, above the first line;
    // a PDF cannot tell it from the page margin.
    expect(Math.abs((margins?.top ?? 0) - (1 + 12 / 72))).toBeLessThanOrEqual(TOLERANCE_IN);
  });
});

describe("pdf page setup: corpus PDFs", () => {
  // Expected values were measured apart from this code, with poppler: `pdfinfo -box` for the
  // MediaBox, and `pdftotext -bbox-layout` for the body text's extent on each page (lines of the
  // running header/footer named below left out), taking the median page; bottom over the pages
  // that are followed by another.
  it.each<[string, string, "portrait", PageMargins]>([
    // 612 x 792; footer "Instructions for Form 8863 (2013) -N-" below 10.4 in left out.
    ["pdf/irs-fd_ins_8863-2013.pdf", "Letter", "portrait", { top: 0.36, right: 0.59, bottom: 0.68, left: 0.58 }],
    // 612 x 792; header "North Dakota NN" above 0.55 in and the repeated table footnote
    // "*If a Qualifying widow(er) ..." below 10.1 in left out.
    ["pdf/nd-ins-taxtable-2013.pdf", "Letter", "portrait", { top: 0.8, right: 0.27, bottom: 1.03, left: 0.26 }],
    // 612 x 792, pdfTeX two-column paper: no running lines.
    ["pdf/pdfjs-tracemonkey.pdf", "Letter", "portrait", { top: 1.02, right: 0.78, bottom: 0.92, left: 0.75 }],
    // 595 x 842 (A4), 41 pages, RC4 owner password; page numbers below 11 in left out.
    ["pdf/tika-testPDF_protected-ownerpw.pdf", "A4", "portrait", { top: 1.04, right: 1.27, bottom: 1, left: 1.25 }],
  ])("%s: %s %s with the body text's margins", async (file, size, orientation, margins) => {
    const result = await convertPdf(fixture(file), path.basename(file));
    expect(result.pageSetup?.size).toBe(size);
    expect(result.pageSetup?.orientation).toBe(orientation);
    expectMargins(result.pageSetup?.margins, margins);
  });

  it("gives the Word-made 'various' PDF the margins of the docx it was printed from", async () => {
    // Its text never comes near the right margin (widest line ends 2.3 in from the edge) and
    // it has a running header and footer: the margins come from page 1 and the mirror rule.
    const docx = await convertDocx(fixture("docx/tika-testWORD_various.docx"), "various.docx", DEFAULT_LIMITS);
    expect(docx.pageSetup?.margins).toEqual({ top: 1, right: 1, bottom: 1, left: 1 });
    const pdf = await convertPdf(fixture("pdf/tika-testPDFVarious.pdf"), "various.pdf");
    expect(pdf.pageSetup?.size).toBe(docx.pageSetup?.size);
    expectMargins(pdf.pageSetup?.margins, docx.pageSetup?.margins as PageMargins);
  });
});

interface TestPage {
  mediaBox: number[];
  cropBox?: number[];
  rotate?: number;
  /** Content stream operators; /F1 is Courier, /Im1 a 2 x 2 grey image. */
  content: string;
}

/** A small valid PDF (classic xref table) with the given pages; byte offsets are exact. */
function buildPdf(pages: TestPage[]): Buffer {
  const objects = [
    "<< /Type /Catalog /Pages 2 0 R >>",
    "", // the page tree, once the page numbers are known
    "<< /Type /Font /Subtype /Type1 /BaseFont /Courier /Encoding /WinAnsiEncoding >>",
    "<< /Type /XObject /Subtype /Image /Width 2 /Height 2 /ColorSpace /DeviceGray /BitsPerComponent 8 /Length 4 >>\nstream\n\x00\xff\xff\x00\nendstream",
  ];
  const kids: number[] = [];
  for (const page of pages) {
    objects.push(`<< /Length ${page.content.length} >>\nstream\n${page.content}\nendstream`);
    const boxes = `/MediaBox [${page.mediaBox.join(" ")}]${page.cropBox ? ` /CropBox [${page.cropBox.join(" ")}]` : ""}`;
    objects.push(
      `<< /Type /Page /Parent 2 0 R ${boxes}${page.rotate ? ` /Rotate ${page.rotate}` : ""} /Resources << /Font << /F1 3 0 R >> /XObject << /Im1 4 0 R >> >> /Contents ${objects.length} 0 R >>`,
    );
    kids.push(objects.length);
  }
  objects[1] = `<< /Type /Pages /Kids [${kids.map((k) => `${k} 0 R`).join(" ")}] /Count ${kids.length} >>`;
  let out = "%PDF-1.4\n";
  const offsets = objects.map((body, i) => {
    const at = out.length;
    out += `${i + 1} 0 obj\n${body}\nendobj\n`;
    return at;
  });
  const xref = out.length;
  out += `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n`;
  out += offsets.map((o) => `${String(o).padStart(10, "0")} 00000 n \n`).join("");
  out += `trailer\n<< /Size ${objects.length + 1} /Root 1 0 R >>\nstartxref\n${xref}\n%%EOF\n`;
  // latin1: one byte per character, so string lengths are the byte offsets written above.
  return Buffer.from(out, "latin1");
}

/**
 * A point of the displayed page (points, y down from the top-left corner) in the user space of
 * a page with this visible box and /Rotate (PDF 32000-1 7.7.3.3: the page turns clockwise).
 */
function toUser([x0, y0, x1, y1]: number[], rotate: number, X: number, Y: number): [number, number] {
  switch (rotate) {
    case 90:
      return [x0 + Y, y0 + X];
    case 180:
      return [x1 - X, y0 + Y];
    case 270:
      return [x1 - Y, y1 - X];
    default:
      return [x0 + X, y1 - Y];
  }
}

/** Text matrix of a run starting at (X, Y) on the displayed page, reading along (dx, dy) there. */
function displayedTm(box: number[], rotate: number, X: number, Y: number, [dx, dy] = [1, 0]): string {
  const [ox, oy] = toUser(box, rotate, X, Y);
  const [ax, ay] = toUser(box, rotate, X + dx, Y + dy);
  // "Up" for the glyphs is the reading direction turned a quarter anticlockwise as seen.
  const [cx, cy] = toUser(box, rotate, X + dy, Y - dx);
  return `${ax - ox} ${ay - oy} ${cx - ox} ${cy - oy} ${ox} ${oy} Tm`;
}

describe("pdf page setup: generated PDFs (rotation, boxes, scans)", () => {
  it.each([0, 90, 180, 270])(
    "a page with /Rotate %i and an offset MediaBox reads in its displayed orientation",
    async (rotate) => {
      // A portrait Letter MediaBox starting at (100, 50): with /Rotate 90 or 270 it shows as
      // landscape Letter, 792 x 612 pt. The text block is 1 in from every displayed edge.
      const mediaBox = [100, 50, 712, 842];
      const landscape = rotate % 180 !== 0;
      const [width, height] = landscape ? [792, 612] : [612, 792];
      const chars = (width - 144) / 7.2;
      const lines: string[] = [];
      // Baselines from 1 in + 9 pt (the first line's ascent) down to the last whose
      // descent still fits above the bottom margin: full pages.
      for (let y = 81; y + 3 <= height - 72; y += 14.4)
        lines.push(`BT /F1 12 Tf ${displayedTm(mediaBox, rotate, 72, y)} (${"x".repeat(chars)}) Tj ET`);
      // A stamp reading upwards in the left margin (arXiv style) is not body text.
      const stamp = `BT /F1 9 Tf ${displayedTm(mediaBox, rotate, 30, 500, [0, -1])} (Preprint 2024) Tj ET`;
      const full = { mediaBox, rotate, content: [stamp, ...lines].join("\n") };
      const short = { mediaBox, rotate, content: lines.slice(0, 4).join("\n") };
      const result = await convertPdf(buildPdf([full, full, short]), "rotated.pdf");
      expect(result.pageSetup?.size).toBe("Letter");
      expect(result.pageSetup?.orientation).toBe(landscape ? "landscape" : "portrait");
      expectMargins(result.pageSetup?.margins, { top: 1, right: 1, bottom: 1, left: 1 });
      expect(result.html).toContain("x".repeat(chars));
    },
  );

  it("takes the size from the CropBox and measures the margins from its edges", async () => {
    // An A4 sheet cropped to A5 (420 x 595 pt) at (40, 60); the text sits 0.5 in inside the crop.
    const mediaBox = [0, 0, 595, 842];
    const cropBox = [40, 60, 460, 655];
    const chars = Math.floor((420 - 72) / 7.2);
    const lines: string[] = [];
    for (let y = 36 + 9; y + 3 <= 595 - 36; y += 14.4)
      lines.push(`BT /F1 12 Tf ${displayedTm(cropBox, 0, 36, y)} (${"x".repeat(chars)}) Tj ET`);
    const page = { mediaBox, cropBox, content: lines.join("\n") };
    const setup = (await convertPdf(buildPdf([page, page]), "cropped.pdf")).pageSetup;
    expect(setup?.size).toEqual({ width: 5.83, height: 8.26 });
    expect(setup?.orientation).toBe("portrait");
    const right = (420 - 36 - chars * 7.2) / 72;
    expectMargins(setup?.margins, { top: 0.5, right, bottom: 0.5, left: 0.5 });
  });

  it("keeps the size of a scanned (image-only) document and leaves its margins out", async () => {
    const scan = { mediaBox: [0, 0, 595.28, 841.89], content: "q 595.28 0 0 841.89 0 0 cm /Im1 Do Q" };
    const result = await convertPdf(buildPdf([scan, scan]), "scan.pdf");
    expect(result.pageSetup).toEqual({ size: "A4", orientation: "portrait", margins: null });
    expect(result.warnings.some((w) => /No text could be extracted/.test(w))).toBe(true);
  });
});

/** A page of `lines` 12 pt text lines, 1 in from each side of a Letter page (points, y down). */
function letterPage(lines: number, extra: TextBox[] = []): PageGeometry {
  const boxes: TextBox[] = [];
  for (let k = 0; k < lines; k++)
    boxes.push({
      text: `Body line ${k} of the page`,
      left: 72,
      right: 540,
      top: 72 + k * 14,
      bottom: 84 + k * 14,
      size: 12,
    });
  return { width: 612, height: 792, boxes: [...boxes, ...extra] };
}

describe("pdf page setup: the margin statistic", () => {
  it("is not moved by page numbers or by one full-bleed page", () => {
    const pageNumber = (n: number): TextBox => ({
      text: `${n}`,
      left: 300,
      right: 312,
      top: 750,
      bottom: 760,
      size: 10,
    });
    const pages = Array.from({ length: 8 }, (_, n) => letterPage(46, [pageNumber(n + 1)]));
    pages[3].boxes.push({
      text: "Photo: a caption printed over the bleed",
      left: 10,
      right: 602,
      top: 10,
      bottom: 22,
      size: 12,
    });
    // Full pages end 1.08 in from the bottom, less than a line below the 1 in top: symmetric.
    expect(estimateMargins(pages)).toEqual({ top: 1, right: 1, bottom: 1, left: 1 });
  });

  it("uses the size most pages share and says nothing of margins without text", () => {
    const cover: PageGeometry = { width: 700, height: 900, boxes: [] };
    const setup = pdfPageSetup([cover, letterPage(0), letterPage(0)]);
    expect(setup).toEqual({ size: "Letter", orientation: "portrait", margins: null });
    expect(pdfPageSetup([])).toBeNull();
  });
});
