import { InputError } from "@redline/service-kit";
import * as cheerio from "cheerio";
import { describe, expect, it } from "vitest";
import { readCorpus } from "../testing/corpus.js";
import { convertText } from "./text.js";

describe("txt converter", () => {
  it("decodes Windows-1252 text that is not valid UTF-8 into curly quotes", async () => {
    const result = await convertText(readCorpus("txt/tika-testTXT_win-1252.txt"), "tika-testTXT_win-1252.txt");
    expect(result.html).toBe(
      "<p>These smart quotes are the trigger for CharsetRecog_sbcs to think this is a “windows” encoding</p>",
    );
    expect(result.warnings).toContain("The text was decoded as windows-1252");
    expect(result.format).toBe("txt");
  });

  it("keeps UTF-8 non-ASCII text", async () => {
    const result = await convertText(readCorpus("txt/tika-testTXTNonASCIIUTF8.txt"), "utf8.txt");
    const $ = cheerio.load(result.html, null, false);
    expect($("p")).toHaveLength(4);
    expect(result.html).toContain("Der schnelle braune Fuchs springt über den faulen Hund");
    expect(result.html).toMatch(/[\u0600-\u06ff]{3}/);
    expect(result.warnings).toEqual([]);
  });

  it("splits a CRLF novel into many paragraphs with chapter headings and no carriage returns", async () => {
    const result = await convertText(readCorpus("txt/snappy-alice29.txt"), "alice29.txt");
    const $ = cheerio.load(result.html, null, false);
    expect($("p").length).toBeGreaterThan(500);
    expect(result.html).not.toContain("\r");
    const headings = $("h2")
      .map((_, h) => $(h).text())
      .get();
    expect(headings).toContain("CHAPTER I");
    expect(headings).toContain("CHAPTER XII");
    expect(result.title).toBe("ALICE'S ADVENTURES IN WONDERLAND");
    // Single newlines inside a paragraph are kept as line breaks.
    expect(
      $("p")
        .filter((_, p) => $(p).text().startsWith("Alice was beginning"))
        .html(),
    ).toContain("<br>");
  });

  it("escapes markup, reads UTF-16 with a BOM, and keeps prose lines that merely shout", async () => {
    const text = "A <b>tag</b> & more\n\nSTOP RIGHT THERE!\n\nCHAPTER 2. The Return";
    const bytes = Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(text, "utf16le")]);
    const result = await convertText(bytes, "notes.txt");
    expect(result.html).toBe(
      "<p>A &lt;b&gt;tag&lt;/b&gt; &amp; more</p>\n<p>STOP RIGHT THERE!</p>\n<h2>CHAPTER 2. The Return</h2>",
    );
    expect(result.title).toBe("CHAPTER 2. The Return");
  });

  it("refuses binary data", async () => {
    const err = await convertText(Buffer.from([0, 1, 2, 3, 4, 5, 6, 7, 0x41, 0, 1, 2]), "x.txt").catch(
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(InputError);
    expect((err as Error).message).toMatch(/does not look like text/);
  });
});
