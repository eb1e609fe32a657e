import { InputError } from "@redline/service-kit";
import * as cheerio from "cheerio";
import iconv from "iconv-lite";
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

  // Text as Word writes it for a font of another charset: every byte a \'hh escape.
  const hexEscapes = (text: string, codepage: string) =>
    [...iconv.encode(text, codepage)].map((b) => `\\'${b.toString(16).padStart(2, "0")}`).join("");
  const fontRtf = (fonts: string, body: string) =>
    Buffer.from(`{\\rtf1\\ansi\\ansicpg1252\\deff0{\\fonttbl${fonts}}\n${body}\n}`, "latin1");

  it("decodes \\'hh bytes in the code page of the current font's \\fcharset (Shift_JIS, GBK, Cyrillic)", async () => {
    const japanese = "日本語のテキスト、ソルゲと尾崎";
    const chinese = "简体中文文本";
    const russian = "Привет, мир";
    const result = await convertRtf(
      fontRtf(
        "{\\f0\\froman\\fcharset0 Times;}{\\f1\\fnil\\fcharset128 MS Mincho;}{\\f2\\fnil\\fcharset134 SimSun;}{\\f3\\fcharset204 Arial Cyr;}",
        `\\pard Latin caf\\'e9\\par\\pard {\\f1 ${hexEscapes(japanese, "shift_jis")}}\\par\\pard {\\f2 ${hexEscapes(chinese, "gbk")}}\\par\\pard \\f3 ${hexEscapes(russian, "cp1251")}\\par`,
      ),
      "fonts.rtf",
    );
    const $ = cheerio.load(result.html, null, false);
    expect(textsOf($, $("p"))).toEqual(["Latin café", japanese, chinese, russian]);
    expect(result.warnings.join(" ")).not.toMatch(/could not be decoded/);
  });

  it("joins a double-byte character whose trail byte is written as a plain character", async () => {
    // Word writes Shift_JIS trail bytes in the ASCII range as themselves: テ is 0x83 'e'.
    const result = await convertRtf(
      fontRtf("{\\f1\\fcharset128 MS Gothic;}", "\\pard\\f1 \\'83e\\'83X\\'83g\\par"),
      "trail.rtf",
    );
    expect(result.html).toBe("<p>テスト</p>");
  });

  it("uses \\ansicpg for fonts of the ANSI charset and \\deff for text before any \\f", async () => {
    const result = await convertRtf(
      Buffer.from(
        `{\\rtf1\\ansi\\ansicpg1251\\deff1{\\fonttbl{\\f0\\fcharset0 A;}{\\f1\\fcharset161 Greek;}}\\pard ${hexEscapes("Αλφα", "cp1253")}\\par\\pard\\f0 ${hexEscapes("Дом", "cp1251")}\\par}`,
        "latin1",
      ),
      "cp.rtf",
    );
    const $ = cheerio.load(result.html, null, false);
    expect(textsOf($, $("p"))).toEqual(["Αλφα", "Дом"]);
  });

  it("warns when bytes cannot be decoded in the font's code page instead of passing mojibake silently", async () => {
    // 0x81 0x7f is no character in Shift_JIS (0x7f is never a trail byte).
    const result = await convertRtf(
      fontRtf("{\\f1\\fcharset128 MS Gothic;}", "\\pard\\f1 ok \\'81\\'7f\\par"),
      "bad.rtf",
    );
    expect(result.warnings.find((w) => /could not be decoded/.test(w))).toMatch(/cp932 \(Shift_JIS\)/);
  });

  it("keeps hidden text (\\v) as a hidden span, as the docx import keeps w:vanish", async () => {
    const result = await convertRtf(Buffer.from("{\\rtf1\\ansi\\pard Shown {\\v\\b secret} shown\\v0.\\par}"), "v.rtf");
    expect(result.html).toBe('<p>Shown <span data-hidden="true" hidden=""><strong>secret</strong></span> shown.</p>');
  });

  it("keeps a footer's table out of the flow: it is its own footer block, not a body table", async () => {
    const rtf = Buffer.from(
      "{\\rtf1\\ansi{\\footer\\pard\\plain Footer line\\par" +
        "\\trowd\\cellx2000\\cellx4000\\pard\\intbl Page\\cell\\pard\\intbl Total\\cell\\row\\pard\\par}" +
        "{\\header\\pard Head\\par}\\pard Body text\\par}",
      "latin1",
    );
    const html = (await convertRtf(rtf, "footer.rtf")).html;
    const $ = cheerio.load(html, null, false);
    expect($("table")).toHaveLength(1);
    expect($("table").attr("data-part")).toBe("footer");
    expect($("table").attr("data-variant")).toBe("default");
    expect(textsOf($, $("table td"))).toEqual(["Page", "Total"]);
    expect($('p[data-part="footer"]').text()).toBe("Footer line");
    expect(textsOf($, $.root().children().not("[data-part]"))).toEqual(["Body text"]);
    // Every top-level block stays whole when parsed: nothing of the footer reaches the flow.
    expect(
      $.root()
        .children()
        .toArray()
        .map((el) => $(el).attr("data-part") ?? "body"),
    ).toEqual(["header", "body", "footer", "footer"]);
  });
});
