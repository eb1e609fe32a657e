import * as cheerio from "cheerio";
import iconv from "iconv-lite";
import { afterAll, describe, expect, it } from "vitest";
import { convertDocument } from "../convert.js";
import { ConverterPool } from "../sandbox/pool.js";
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

describe("html pictures through the conversion pipeline (converter, then the sanitizer)", () => {
  const keep = new ConverterPool({ size: 1 });
  const drop = new ConverterPool({ size: 1, remoteImages: "drop" });
  afterAll(async () => {
    await Promise.all([keep.close(), drop.close()]);
  });
  const page = Buffer.from(
    [
      "<body><h1>Saved page <a href='https://ci.example/'><img src='https://ci.example/badge.svg' alt='build passing'></a></h1>",
      "<p>Logo <img src='/images/logo.png' alt='ACME logo'> and <img src='figures/fig%201.jpg' alt='Figure 1'></p>",
      "<p>Bad <img src='javascript:alert(1)' alt='j'><img src='data:text/html,x' alt='d'><img src='/v1/keys' alt='api'></p>",
      "</body>",
    ].join(""),
  );

  it("keeps remote and relative sources with their alt; scripts, non-image data: and our API stay out", async () => {
    const { html, warnings } = await convertDocument("saved.html", page, {}, keep);
    const $ = cheerio.load(html, null, false);
    expect(
      $("img")
        .map((_, i) => `${$(i).attr("src")} ${$(i).attr("alt")}`)
        .get(),
    ).toEqual([
      "https://ci.example/badge.svg build passing",
      "/images/logo.png ACME logo",
      "figures/fig%201.jpg Figure 1",
    ]);
    expect(html).toContain("<p>Bad </p>");
    expect(warnings).toContain("3 images point to files next to the page (relative URLs) and will not display");
  });

  it("drops them all where the operator set REMOTE_IMAGES=drop", async () => {
    const { html } = await convertDocument("saved.html", page, {}, drop);
    expect(html).not.toContain("<img");
    expect(html).toContain('<h1>Saved page <a href="https://ci.example/"></a></h1>');
  });

  it("a real Medium page keeps its figures' remote images and alt texts", async () => {
    const { html } = await convertDocument(
      "keep-images.html",
      readCorpus("html/readability-keep-images.html"),
      {},
      keep,
    );
    const $ = cheerio.load(html, null, false);
    const srcs = $("img")
      .map((_, i) => $(i).attr("src") ?? "")
      .get();
    expect(srcs.length).toBeGreaterThanOrEqual(15);
    expect(srcs.every((src) => /^https:\/\//.test(src))).toBe(true);
    expect($("figure img").length).toBeGreaterThanOrEqual(10);
  });
});
