import { InputError, UnsupportedMediaTypeError } from "@redline/service-kit";
import * as cheerio from "cheerio";
import { afterAll, describe, expect, it } from "vitest";
import { convertDocument } from "./convert.js";
import { SUPPORTED_EXTENSIONS } from "./formats.js";
import { ConverterPool } from "./sandbox/pool.js";
import { readCorpus } from "./testing/corpus.js";

const pool = new ConverterPool({ size: 2 });
// The largest docx of the corpus (procurement tables): slow and memory-hungry to convert.
const convertLarge = (on: ConverterPool, timeoutMs: number) =>
  convertDocument("large.docx", readCorpus("docx/poi-bug65649-large-procurement-tables.docx"), { timeoutMs }, on).catch(
    (e: unknown) => e,
  );
afterAll(() => pool.close());

describe("convertDocument (front door, in worker processes)", () => {
  it("lists the seven supported extensions", () => {
    expect([...SUPPORTED_EXTENSIONS]).toEqual([".pdf", ".docx", ".txt", ".rtf", ".md", ".html", ".htm"]);
  });

  it.each([
    ["tika-testWORD_various.doc", ".doc"],
    ["README", ""],
    ["archive.zip", ".zip"],
  ])("refuses %s with a 415 listing the supported extensions", async (name, ext) => {
    const err = await convertDocument(name, Buffer.from("x"), {}, pool).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(UnsupportedMediaTypeError);
    const e = err as UnsupportedMediaTypeError;
    expect(e.httpStatus).toBe(415);
    expect(e.message).toContain(".pdf, .docx, .txt, .rtf, .md, .html, .htm");
    expect(e.body).toEqual({ code: "unsupported_media_type", supported_extensions: [...SUPPORTED_EXTENSIONS] });
    if (ext) expect(e.message).toContain(`'${ext}'`);
  });

  it("refuses the legacy .doc corpus file by its extension", async () => {
    await expect(
      convertDocument("tika-testWORD_various.doc", readCorpus("doc/tika-testWORD_various.doc"), {}, pool),
    ).rejects.toBeInstanceOf(UnsupportedMediaTypeError);
  });

  it.each([
    ["a.TXT", "txt", "hi there"],
    ["a.md", "md", "# hi"],
    ["a.html", "html", "<p>hi</p>"],
    ["a.htm", "html", "<p>hi</p>"],
    ["C:\\fakepath\\a.rtf", "rtf", "{\\rtf1 hi\\par}"],
  ])("routes %s to the %s converter", async (name, format, text) => {
    const result = await convertDocument(name, Buffer.from(text), {}, pool);
    expect(result.format).toBe(format);
    expect(result.html).toContain("hi");
  });

  it("keeps the error class across the worker boundary", async () => {
    const err = await convertDocument(
      "p.docx",
      readCorpus("docx/tika-testWORD_protected_passtika.docx"),
      {},
      pool,
    ).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(InputError);
    expect((err as Error).message).toMatch(/password/);
    await expect(convertDocument("empty.txt", Buffer.alloc(0), {}, pool)).rejects.toThrow("The uploaded file is empty");
  });

  it("converts a PDF and a docx in workers", async () => {
    const [pdf, docx] = await Promise.all([
      convertDocument("v.pdf", readCorpus("pdf/tika-testPDFVarious.pdf"), {}, pool),
      convertDocument("v.docx", readCorpus("docx/tika-testWORD_various.docx"), {}, pool),
    ]);
    expect(pdf.html).toContain("This is a hyperlink");
    expect(docx.html).toContain('<a href="http://tika.apache.org/">This is a hyperlink</a>');
  });

  it("converts the large procurement docx (21 tables, thousands of merged cells)", async () => {
    const result = await convertDocument(
      "poi-bug65649-large-procurement-tables.docx",
      readCorpus("docx/poi-bug65649-large-procurement-tables.docx"),
      { timeoutMs: 120_000 },
      pool,
    );
    const $ = cheerio.load(result.html, null, false);
    expect($("table")).toHaveLength(21);
    expect($("td[colspan]").length).toBeGreaterThan(1000);
    expect($("td[rowspan]").length).toBeGreaterThan(100);
    expect(result.title).toBe("Расчет цены Контракта");
    expect(result.pageSetup?.size).toBe("A4");
  }, 150_000);

  it("answers a conversion that outgrows the worker heap cap with a 400", async () => {
    const small = new ConverterPool({ size: 1, maxMemoryMb: 48 });
    try {
      const err = await convertLarge(small, 120_000);
      expect(err).toBeInstanceOf(InputError);
      expect((err as Error).message).toMatch(/needs more than 48 MB of memory to convert/);
      expect((await convertDocument("ok.md", Buffer.from("# fine"), {}, small)).html).toBe("<h1>fine</h1>");
    } finally {
      await small.close();
    }
  }, 150_000);

  it("kills a conversion past its time bound with a 400, and the pool keeps working", async () => {
    const err = await convertLarge(pool, 200);
    expect(err).toBeInstanceOf(InputError);
    expect((err as Error).message).toMatch(/took longer than 0\.2 s to convert; it may be damaged or too complex/);
    const after = await convertDocument("ok.txt", Buffer.from("still alive"), {}, pool);
    expect(after.html).toBe("<p>still alive</p>");
  });
});
