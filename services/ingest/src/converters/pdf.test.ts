import { InputError } from "@redline/service-kit";
import { describe, expect, it } from "vitest";
import { readCorpus } from "../testing/corpus.js";
import { convertPdf, pageToHtml } from "./pdf.js";

describe("pdf converter", () => {
  it("extracts the text of the 'various' PDF with page setup", async () => {
    const result = await convertPdf(readCorpus("pdf/tika-testPDFVarious.pdf"), "tika-testPDFVarious.pdf");
    expect(result.format).toBe("pdf");
    for (const text of [
      "Here is a numbered list:",
      "Bullet 1",
      "This is a hyperlink",
      "Row 1 Col 1",
      "ゾルゲと尾崎、淡々と最期",
    ]) {
      expect(result.html).toContain(text);
    }
    expect(result.pageSetup).toEqual({ size: "Letter", orientation: "portrait", margins: null });
    expect(result.warnings[0]).toMatch(/without its layout/);
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

  it("turns tab-separated lines into a table", () => {
    expect(pageToHtml("Head\na\tb\nc\td")).toEqual([
      "<p>Head</p>",
      "<table><tbody><tr><td>a</td><td>b</td></tr><tr><td>c</td><td>d</td></tr></tbody></table>",
    ]);
  });
});
