import { InputError } from "@redline/service-kit";
import * as cheerio from "cheerio";
import { beforeAll, describe, expect, it } from "vitest";
import { DEFAULT_LIMITS } from "../formats.js";
import { readCorpus } from "../testing/corpus.js";
import { buildZip, deflatedZeros, minimalDocxParts } from "../testing/zip.js";
import { convertDocx } from "./docx.js";

const MB = 1024 * 1024;
// A Letter page setup with top/bottom and left/right margins in inches.
const letter = (orientation: string, topBottom: number, leftRight: number) => ({
  size: "Letter",
  orientation,
  margins: { top: topBottom, right: leftRight, bottom: topBottom, left: leftRight },
});
const convert = (rel: string) => convertDocx(readCorpus(rel), rel.split("/").pop() ?? rel, DEFAULT_LIMITS);

describe("docx converter", () => {
  it("keeps the table, lists, inline formatting, link, footnote and non-BMP text of the 'various' document", async () => {
    const result = await convert("docx/tika-testWORD_various.docx");
    const $ = cheerio.load(result.html, null, false);

    expect(result.format).toBe("docx");
    const tables = $("table");
    expect(tables).toHaveLength(1);
    const rows = tables.find("tr");
    expect(rows).toHaveLength(2);
    rows.each((_, tr) => expect($(tr).children("td")).toHaveLength(3));
    expect($("td").first().text()).toBe("Row 1 Col 1");

    expect(
      $("ul > li")
        .map((_, li) => $(li).text())
        .get(),
    ).toEqual(["Bullet 1", "Bullet 2", "Bullet 3"]);
    const numbered = $("ol").filter((_, ol) => $(ol).find("li[id^=footnote]").length === 0);
    expect(
      numbered
        .find("li")
        .map((_, li) => $(li).text())
        .get(),
    ).toEqual(["Number bullet 1", "Number bullet 2", "Number bullet 3"]);

    expect($("strong").text()).toContain("Bold");
    expect($("em").first().text()).toContain("italic");
    expect($("u").first().text()).toBe("underline");
    expect($("sup").text()).toContain("superscript");
    expect($("sub").text()).toContain("subscript");
    expect($("s").first().text()).toBe("strikethrough");
    expect($('a[href="http://tika.apache.org/"]').text()).toBe("This is a hyperlink");

    // Footnotes come last as an ordered list, linked from the reference in the text.
    expect($("li[id^=footnote]").text()).toContain("This is a footnote.");
    expect($('a[href^="#footnote-"]').length).toBeGreaterThan(0);

    expect(result.html).toContain("ゾルゲと尾崎、淡々と最期");
    expect(result.html).toContain("𐌲𐌿𐍄𐌹𐍃𐌺");
    expect(result.pageSetup).toEqual(letter("portrait", 1, 1));
    expect(result.title).toBe("tika-testWORD_various");
    // Header and footer are out-of-flow parts: first and last, never mixed into the text.
    expect(result.html.startsWith('<p data-part="header" data-variant="default">This is the header text.</p>')).toBe(
      true,
    );
    expect(result.html).toContain('<p data-part="footer" data-variant="default">This is the footer text.</p>');
    expect($('ol[data-part="footnote"] li[id^=footnote]').length).toBe(1);
  });

  it("keeps merged cells as colspan and rowspan", async () => {
    const $ = cheerio.load((await convert("docx/pydocx-tbl-cell-access-merged.docx")).html, null, false);
    expect($("table")).toHaveLength(4);
    expect($('td[colspan="2"]').length).toBeGreaterThanOrEqual(1);
    expect($('td[rowspan="2"]').length).toBeGreaterThanOrEqual(1);
    // The fourth table merges a 2x2 block into one cell.
    expect($("table").eq(3).find('td[colspan="2"][rowspan="2"]').text()).toBe("4");
  });

  it("converts the budget tables with their euro amounts, and Title becomes h1", async () => {
    const result = await convert("docx/poi-IllustrativeCases-budget-tables.docx");
    const $ = cheerio.load(result.html, null, false);
    expect($("table")).toHaveLength(8);
    expect(result.html).toMatch(/€\s?\d/);
    expect($("h1").first().text()).toBe(result.title);
    expect(result.pageSetup?.size).toBe("A4");
  });

  it("converts an ISO Strict document", async () => {
    const result = await convert("docx/mammoth-strict-format.docx");
    expect(result.html).toBe("<p>Test</p>");
    expect(result.pageSetup?.orientation).toBe("portrait");
  });

  it("accepts tracked changes and keeps comments as out-of-flow parts", async () => {
    expect((await convert("docx/poi-delins-tracked-changes.docx")).warnings).toContain(
      "Tracked changes were accepted: insertions are kept and deletions removed",
    );
    const comments = await convert("docx/pydocx-comments-rich-para.docx");
    const $ = cheerio.load(comments.html);
    expect($('[data-part="comment"]').length).toBe(4);
    expect($('[data-part="comment"][data-comment-id="0"]').attr("data-author")).toBe("Steve Canny");
    expect($('[data-part="comment"]').first().text()).toContain("Text with hyperlink");
    // Comments are never inlined into the text.
    expect($("body > :not([data-part])").text()).not.toContain("Text with hyperlink");
  });

  it("reads landscape page setup and margins from the last section", async () => {
    const result = await convertDocx(buildZip(minimalDocxParts()), "landscape.docx", DEFAULT_LIMITS);
    expect(result.html).toBe("<p>Hello</p>");
    expect(result.title).toBe("landscape");
    expect(result.pageSetup).toEqual(letter("landscape", 0.5, 1));
  });

  describe("refusals", () => {
    it("refuses a password-protected docx with an actionable 400", async () => {
      const err = await convert("docx/tika-testWORD_protected_passtika.docx").catch((e: unknown) => e);
      expect(err).toBeInstanceOf(InputError);
      expect((err as InputError).httpStatus).toBe(400);
      expect((err as InputError).message).toMatch(/encrypted\/password-protected/);
      expect((err as InputError).message).toMatch(/remove the password/);
    });

    it("refuses a truncated zip as damaged", async () => {
      const err = await convert("docx/poi-truncated62886.docx").catch((e: unknown) => e);
      expect(err).toBeInstanceOf(InputError);
      expect((err as Error).message).toMatch(/damaged \(truncated zip: no central directory\)/);
    });

    it("refuses a legacy .doc renamed to .docx", async () => {
      const err = await convertDocx(readCorpus("doc/tika-testWORD_various.doc"), "renamed.docx", DEFAULT_LIMITS).catch(
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(InputError);
      expect((err as Error).message).toMatch(/Word 97-2003/);
    });

    it("refuses a file that is not a zip", async () => {
      const err = await convertDocx(Buffer.from("just some text"), "x.docx", DEFAULT_LIMITS).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(InputError);
      expect((err as Error).message).toMatch(/not a zip container/);
    });
  });

  describe("zip bombs are refused before anything is inflated", () => {
    let bigZeros: Buffer;
    beforeAll(async () => {
      bigZeros = await deflatedZeros(300 * MB);
    }, 60_000);

    async function refuse(zip: Buffer): Promise<InputError> {
      const heapBefore = process.memoryUsage().heapUsed + process.memoryUsage().arrayBuffers;
      const started = Date.now();
      const err = await convertDocx(zip, "bomb.docx", DEFAULT_LIMITS).catch((e: unknown) => e);
      const elapsed = Date.now() - started;
      const grown = process.memoryUsage().heapUsed + process.memoryUsage().arrayBuffers - heapBefore;
      expect(err).toBeInstanceOf(InputError);
      expect(elapsed).toBeLessThan(2000);
      expect(grown).toBeLessThan(100 * MB);
      return err as InputError;
    }

    it("one entry declaring 300 MB of zeros", async () => {
      expect(bigZeros.length).toBeLessThan(2 * MB);
      const zip = buildZip([
        ...minimalDocxParts(),
        { name: "word/media/zeros.bin", deflated: bigZeros, uncompressedSize: 300 * MB },
      ]);
      const err = await refuse(zip);
      expect(err.message).toMatch(/zip bomb: it expands to more than 200 MB/);
    });

    it("10,000 entries", async () => {
      const entries = Array.from({ length: 10_000 }, (_, i) => ({ name: `word/media/e${i}.bin`, data: "x" }));
      const err = await refuse(buildZip([...minimalDocxParts(), ...entries]));
      expect(err.message).toMatch(/10003 entries, more than the 5000 allowed/);
    });

    it("an entry with an absurd compression ratio", async () => {
      const zeros = await deflatedZeros(150 * MB);
      const err = await refuse(
        buildZip([...minimalDocxParts(), { name: "word/media/z.bin", deflated: zeros, uncompressedSize: 150 * MB }]),
      );
      expect(err.message).toMatch(/compresses \d+:1/);
    });

    it("an entry that lies about its size", async () => {
      // Declares 1000 bytes, inflates to 300 MB: caught after 1000 bytes of output.
      const err = await refuse(
        buildZip([...minimalDocxParts(), { name: "word/media/liar.bin", deflated: bigZeros, uncompressedSize: 1000 }]),
      );
      expect(err.message).toMatch(/expands beyond the 1000 bytes it declares/);
    });
  });
});
