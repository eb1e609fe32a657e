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

  it("keeps link and image destinations as the file writes them, a second # in the fragment too", async () => {
    const file = [
      "See [the room](https://chat.example/#/room/#name:host), <https://chat.example/#/room/#other:host>,",
      "https://chat.example/#/room/#bare:host and [ref][r].",
      "",
      '[Paths](<https://x.example/a b/ü.html?q=1&r=%20#f#g> "T") and ![badge](https://img.shields.io/badge/ci-passing-green.svg?style=flat#x#y) [esc](https://x.example/a\\_b)',
      "",
      "[r]: https://chat.example/#/room/#ref:host",
      "",
    ].join("\n");
    const { html } = await convertMarkdown(Buffer.from(file), "links.md");
    const $ = cheerio.load(html, null, false);
    expect(
      $("a")
        .map((_, a) => $(a).attr("href"))
        .get(),
    ).toEqual([
      "https://chat.example/#/room/#name:host",
      "https://chat.example/#/room/#other:host",
      "https://chat.example/#/room/#bare:host",
      "https://chat.example/#/room/#ref:host",
      "https://x.example/a b/ü.html?q=1&r=%20#f#g",
      // CommonMark resolves a backslash escape in a destination.
      "https://x.example/a_b",
    ]);
    expect($("a").eq(4).attr("title")).toBe("T");
    expect($("img").attr("src")).toBe("https://img.shields.io/badge/ci-passing-green.svg?style=flat#x#y");
    expect($("img").attr("alt")).toBe("badge");
    // The attribute is escaped for HTML and nothing else.
    expect(html).toContain('href="https://x.example/a b/ü.html?q=1&amp;r=%20#f#g"');
  });

  it("pdf.js README: the badge images inside the heading's links keep their remote src and alt", async () => {
    const { html } = await convertMarkdown(readCorpus("md/pdfjs-README.md"), "README.md");
    const $ = cheerio.load(html, null, false);
    const badges = $("h1 a img");
    expect(badges.map((_, i) => $(i).attr("alt")).get()).toEqual(["CI", "codecov"]);
    expect(badges.first().attr("src")).toBe(
      "https://github.com/mozilla/pdf.js/actions/workflows/ci.yml/badge.svg?query=branch%3Amaster",
    );
  });
});
