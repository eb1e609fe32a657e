import { chunkHtml } from "@redline/html-chunks";
import * as cheerio from "cheerio";
import JSZip from "jszip";
import { describe, expect, it } from "vitest";
import { convertDocx } from "../converters/docx.js";
import { resolveLayout } from "../export/export-formats.js";
import { htmlToDocx } from "../export/to-docx.js";
import { htmlPage } from "../export/to-html.js";
import { htmlToMarkdown, htmlToText } from "../export/to-text.js";
import { DEFAULT_LIMITS } from "../formats.js";
import { HIDDEN, hiddenDocx } from "../testing/generated-docs.js";

const importDocx = async (bytes: Buffer) => (await convertDocx(bytes, "hidden.docx", DEFAULT_LIMITS)).html;
const hiddenTexts = (html: string) => {
  const $ = cheerio.load(html, null, false);
  return $("span[data-hidden]")
    .map((_, el) => $(el).text())
    .get();
};

describe("docx hidden text (w:vanish)", () => {
  it("is kept as a hidden span that survives sanitizing and chunking, in its place and formatting", async () => {
    const html = await importDocx(await hiddenDocx());
    expect(html).toContain(
      `<p>${HIDDEN.visible}<strong><span data-hidden="true" hidden="">${HIDDEN.hidden}</span></strong>${HIDDEN.after}</p>`,
    );
    const chunked = chunkHtml(html).html;
    expect(hiddenTexts(chunked)).toEqual([HIDDEN.hidden]);
    expect(chunked).toMatch(/<span data-hidden="true" hidden="">/);
  });

  it("is left out of txt and markdown, hidden in the html page, and written back to docx as hidden text", async () => {
    const html = chunkHtml(await importDocx(await hiddenDocx())).html;
    expect(htmlToText(html)).toBe(`${HIDDEN.visible.trim()} ${HIDDEN.after.trim()}\nA plain paragraph.\n`);
    expect(htmlToMarkdown(html).text).not.toContain(HIDDEN.hidden);
    const page = htmlPage({ html, title: "t", layout: resolveLayout({}, null) });
    expect(page).toMatch(/\[hidden\], \[data-hidden\] \{ display: none; \}/);
    expect(hiddenTexts(page)).toEqual([HIDDEN.hidden]);

    const exported = await htmlToDocx({ html, title: "t", layout: resolveLayout({}, null), images: new Map() });
    // Word hides it: the run's style carries w:vanish.
    const zip = await JSZip.loadAsync(exported.bytes);
    const documentXml = await zip.file("word/document.xml")?.async("string");
    const stylesXml = await zip.file("word/styles.xml")?.async("string");
    expect(documentXml).toMatch(new RegExp(`<w:rStyle w:val="RedlineHidden"/>[\\s\\S]*?${HIDDEN.hidden}`));
    expect(stylesXml).toMatch(/w:styleId="RedlineHidden"[\s\S]*?<w:vanish\/>/);
    // And it comes back hidden.
    const again = await convertDocx(exported.bytes, "again.docx", DEFAULT_LIMITS);
    expect(hiddenTexts(again.html)).toEqual([HIDDEN.hidden]);
    expect(cheerio.load(again.html, null, false)("p").first().text()).toBe(
      `${HIDDEN.visible}${HIDDEN.hidden}${HIDDEN.after}`,
    );
    expect(again.warnings.join(" ")).not.toMatch(/Redline Hidden/);
  });

  it("ignores w:vanish switched off and fence characters a document brings itself", async () => {
    const bytes = await hiddenDocx();
    const zip = await JSZip.loadAsync(bytes);
    const xml = (await zip.file("word/document.xml")?.async("string")) ?? "";
    // The hidden run switched off, and the visible text carrying the fence characters.
    zip.file(
      "word/document.xml",
      xml.replace("<w:vanish/>", '<w:vanish w:val="false"/>').replace(HIDDEN.visible, `\uFDD0${HIDDEN.visible}\uFDD1`),
    );
    const html = await importDocx(await zip.generateAsync({ type: "nodebuffer" }));
    expect(hiddenTexts(html)).toEqual([]);
    expect(html).toContain(HIDDEN.hidden);
  });
});
