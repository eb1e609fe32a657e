import { InputError } from "@redline/service-kit";
import * as cheerio from "cheerio";
import { describe, expect, it } from "vitest";
import { readCorpus } from "../testing/corpus.js";
import { convertRtf } from "./rtf.js";

// The converted corpus file as a DOM fragment.
const rtfDom = async (path: string) => cheerio.load((await convertRtf(readCorpus(path), "x.rtf")).html, null, false);
const textsOf = ($: cheerio.CheerioAPI, els: ReturnType<cheerio.CheerioAPI>) => els.map((_, el) => $(el).text()).get();

describe("rtf converter (minimal)", () => {
  it("keeps text, inline formatting, lists, the table, the link, footnote and \\u escapes of the 'various' RTF", async () => {
    const result = await convertRtf(readCorpus("rtf/tika-testRTFVarious.rtf"), "various.rtf");
    const $ = cheerio.load(result.html, null, false);
    expect(result.format).toBe("rtf");
    expect($("strong").text()).toContain("Bold");
    expect($("em").text()).toContain("italic");
    expect($("u").text()).toContain("underline");
    expect($("ul > li")).toHaveLength(3);
    expect($("ol > li:not([id])")).toHaveLength(3);
    expect($("table tr")).toHaveLength(2);
    expect($("table tr").first().find("td")).toHaveLength(3);
    expect($('a[href="http://tika.apache.org"]').text()).toBe("This is a hyperlink");
    expect($("li[id^=footnote]").text()).toContain("This is a footnote.");
    expect(result.html).toContain("ゾルゲと尾崎、淡々と最期");
    expect(result.html).toContain("𐌲𐌿𐍄𐌹𐍃𐌺");
    expect(result.warnings[0]).toMatch(/fonts, colours and layout were not kept/);
  });

  it("decodes \\'hh escapes in the declared code page inside table cells", async () => {
    const $ = await rtfDom("rtf/tika-testRTFTableCellSeparation.rtf");
    expect(textsOf($, $("td"))).toEqual(["a", "b", "c", "d", "ä", "ë", "ö", "ü"]);
  });

  it("keeps JPEG pictures as data: images and handles Word lists", async () => {
    const images = await convertRtf(readCorpus("rtf/tika-testRTFRegularImages.rtf"), "i.rtf");
    expect(images.html.match(/<img src="data:image\/jpeg;base64,/g)).toHaveLength(2);
    const $ = await rtfDom("rtf/tika-testRTFListMicrosoftWord.rtf");
    expect(textsOf($, $("ol").first().find("li"))).toEqual(["one", "two", "three"]);
    expect(textsOf($, $("ul").first().find("li"))).toEqual(["first", "second", "third"]);
  });

  it("refuses a file that is not RTF, and absurd nesting", async () => {
    await expect(convertRtf(Buffer.from("plain text"), "x.rtf")).rejects.toBeInstanceOf(InputError);
    await expect(convertRtf(Buffer.from(`{\\rtf1${"{".repeat(100_000)}`), "x.rtf")).rejects.toThrow(
      /nested too deeply/,
    );
  });
});
