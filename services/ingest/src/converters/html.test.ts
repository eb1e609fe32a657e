import * as cheerio from "cheerio";
import iconv from "iconv-lite";
import { describe, expect, it } from "vitest";
import { readCorpus } from "../testing/corpus.js";
import { convertHtml } from "./html.js";

describe("html converter", () => {
  it("keeps the body of a real page with its tables and drops head, scripts and styles", async () => {
    const result = await convertHtml(readCorpus("html/readability-links-in-tables.html"), "links.html");
    const $ = cheerio.load(result.html, null, false);
    expect($("table").length).toBeGreaterThan(0);
    // The article's 7x4 data table.
    expect($("table").filter((_, t) => $(t).find("tr").length === 7).length).toBeGreaterThan(0);
    expect($("script, style, link, meta, title")).toHaveLength(0);
    expect(result.html).not.toMatch(/<\/?(html|head|body)\b/);
    expect(result.title.length).toBeGreaterThan(0);
    expect(result.format).toBe("html");
  });

  it("accepts an .htm page and titles it from <title>", async () => {
    const result = await convertHtml(readCorpus("html/readability-ietf-1.htm"), "readability-ietf-1.htm");
    expect(result.title).toBe("draft-dejong-remotestorage-04 - remoteStorage");
    expect(cheerio.load(result.html, null, false)("pre").length).toBeGreaterThanOrEqual(20);
  });

  it("decodes the charset declared in a meta tag", async () => {
    const page =
      '<html><head><meta charset="windows-1251"><title>Т</title></head><body><p>Привет, мир</p></body></html>';
    const result = await convertHtml(iconv.encode(page, "windows-1251"), "ru.html");
    expect(result.html).toBe("<p>Привет, мир</p>");
    expect(result.title).toBe("Т");
  });

  it("wraps loose top-level text into paragraphs and keeps inline styles", async () => {
    const result = await convertHtml(
      Buffer.from('<body>Hello <b>world</b><div style="color:red">x</div><!-- c --><script>1</script></body>'),
      "p.html",
    );
    expect(result.html).toBe('<p>Hello <b>world</b></p>\n<div style="color:red">x</div>');
    expect(result.title).toBe("p");
  });
});
