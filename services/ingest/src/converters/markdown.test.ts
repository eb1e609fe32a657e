import * as cheerio from "cheerio";
import { describe, expect, it } from "vitest";
import { readCorpus } from "../testing/corpus.js";
import { convertMarkdown } from "./markdown.js";

describe("md converter", () => {
  it("renders the GFM sampler: table, ordered list from 3, strikethrough, blockquote, code", async () => {
    const result = await convertMarkdown(readCorpus("md/tika-testMARKDOWN.md"), "tika-testMARKDOWN.md");
    const $ = cheerio.load(result.html, null, false);
    expect($("table")).toHaveLength(1);
    expect($("table thead th")).toHaveLength(3);
    expect(result.html).toContain('<ol start="3">');
    expect($("del").length).toBeGreaterThan(0);
    expect($("blockquote").length).toBeGreaterThan(0);
    expect($("pre code").length).toBeGreaterThan(0);
    expect(result.title).toBe($("h1, h2").first().text());
    expect(result.format).toBe("md");
  });

  it("converts the large public-apis README with its 50+ tables and raw HTML blocks", async () => {
    const started = Date.now();
    const result = await convertMarkdown(readCorpus("md/public-apis-README.md"), "README.md");
    const elapsed = Date.now() - started;
    const $ = cheerio.load(result.html, null, false);
    expect($("table").length).toBeGreaterThanOrEqual(50);
    expect($("a").length).toBeGreaterThan(1500);
    // Raw HTML passes through (the documents service sanitizes).
    expect($("div").length).toBeGreaterThan(0);
    expect(elapsed).toBeLessThan(20_000);
  });

  it("drops YAML front matter with a warning", async () => {
    const result = await convertMarkdown(Buffer.from("---\ntitle: x\n---\n# Hello\n\ntext"), "a.md");
    expect(result.html).toBe("<h1>Hello</h1>\n<p>text</p>");
    expect(result.title).toBe("Hello");
    expect(result.warnings).toHaveLength(1);
  });
});
