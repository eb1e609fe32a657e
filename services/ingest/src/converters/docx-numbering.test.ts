import * as cheerio from "cheerio";
import JSZip from "jszip";
import { describe, expect, it } from "vitest";
import { writeDocxInPlace } from "../export/docx-in-place.js";
import { htmlToDocx } from "../export/to-docx.js";
import { htmlToText } from "../export/to-text.js";
import { DEFAULT_LIMITS } from "../formats.js";
import { readCorpus } from "../testing/corpus.js";
import {
  ALIGNED,
  CHECKLIST,
  CONTRACT_ITEMS,
  contractDocx,
  INDENTED,
  numberedCellsDocx,
  STYLE_CENTERED,
  STYLE_LIST_ITEM,
  STYLE_NUMBERED,
} from "../testing/fidelity-docs.js";
import { inPlaceSource } from "../testing/in-place-source.js";
import { convertDocx } from "./docx.js";

const LAYOUT = {
  widthIn: 8.5,
  heightIn: 11,
  orientation: "portrait" as const,
  margins: { top: 1, right: 1, bottom: 1, left: 1 },
  paperName: "Letter" as const,
};

// The list item whose own text, before any nested list, is `text`.
const item = ($: cheerio.CheerioAPI, text: string) =>
  $("li").filter((_, li) => $(li).contents().first().text() === text);
// The paragraph (or heading, or item) whose text is `text`.
const block = ($: cheerio.CheerioAPI, text: string) => $("p, li, h1, h2, h3").filter((_, el) => $(el).text() === text);

async function partXml(bytes: Buffer, name: string): Promise<string> {
  return (await (await JSZip.loadAsync(bytes)).file(name)?.async("string")) ?? "";
}

/** The w:p of document.xml whose text is `text`. */
function paragraphOf(xml: string, text: string): string {
  const p = (xml.match(/<w:p\b[^>]*>(?:(?!<\/w:p>)[\s\S])*<\/w:p>/g) ?? []).find(
    (x) => [...x.matchAll(/<w:t\b[^>]*>([^<]*)<\/w:t>/g)].map((m) => m[1]).join("") === text,
  );
  if (!p) throw new Error(`no paragraph "${text}"`);
  return p;
}

describe("Word numbering on import", () => {
  it("imports lvlOverride, startOverride, level starts and formats, skipped levels and continued lists", async () => {
    const { html } = await convertDocx(await contractDocx(), "contract.docx", DEFAULT_LIMITS);
    const $ = cheerio.load(html, null, false);
    const list = (text: string) => item($, text).parent();
    // The clause list goes on at 3 after another list interrupted it at a deeper level.
    expect(item($, "Payment").index()).toBe(2);
    expect(list("Payment").children("li").first().text()).toMatch(/^Definitions/);
    expect(list("Payment").attr("start")).toBeUndefined();
    // A startOverride restarts another num of the same list at 17: "17. Termination" stays 17.
    expect(list("Termination").attr("start")).toBe("17");
    expect(list("Termination").children("li")).toHaveLength(2);
    // A lvlOverride with its own level: upperLetter from 3.
    expect(list("Annex").attr("type")).toBe("A");
    expect(list("Annex").attr("start")).toBe("3");
    // Formats HTML has no type for are said in data- attributes and CSS.
    expect(list("Zero padded").attr("data-num-fmt")).toBe("decimalZero");
    expect(list("Zero padded").attr("style")).toBe("list-style-type: decimal-leading-zero");
    expect(list("Roman in parentheses").attr("type")).toBe("i");
    expect(list("Roman in parentheses").attr("data-lvl-text")).toBe("%1)");
    expect(list("Roman from four").attr("type")).toBe("I");
    expect(list("Roman from four").attr("start")).toBe("4");
    expect(list("Letter list").attr("type")).toBe("A");
    expect(list("Scope of the agreement").attr("data-lvl-text")).toBe("%1.%2.");
    // The skipped level sits under "Parties" and says its Word level.
    const skipped = list("Skipped level item");
    expect(skipped.parent().contents().first().text()).toBe("Parties");
    expect(skipped.attr("data-ilvl")).toBe("2");
    expect(skipped.attr("type")).toBe("a");
    // The interrupting list is a bullet list of its own, one level down.
    expect(list("Bullet of another list").prop("tagName")).toBe("UL");
    // Numbering from a paragraph style mammoth does not read: the label Word shows.
    expect(block($, STYLE_NUMBERED.text).attr("data-list-label")).toBe(STYLE_NUMBERED.label);
    expect($("li").filter((_, li) => $(li).clone().children().remove().end().text().trim() === "")).toHaveLength(0);
    // Numbering from a style a list level names: an item of its own list, labelled "Clause %1.".
    expect(list(STYLE_LIST_ITEM.text).attr("data-lvl-text")).toBe("Clause %1.");

    const lines = htmlToText(html).split("\n");
    for (const line of [
      "3. Payment",
      "17. Termination",
      "18. Survival",
      "C. Annex",
      "IV. Roman from four",
      "01. Zero padded",
      "i) Roman in parentheses",
      `${STYLE_NUMBERED.label} ${STYLE_NUMBERED.text}`,
      `${STYLE_LIST_ITEM.label} ${STYLE_LIST_ITEM.text}`,
    ])
      expect(lines).toContain(line);
  });

  it("imports paragraph alignment and indentation as inline style, from the paragraph and from its style", async () => {
    const { html } = await convertDocx(await contractDocx(), "contract.docx", DEFAULT_LIMITS);
    const $ = cheerio.load(html, null, false);
    for (const { text, align } of ALIGNED) expect(block($, text).attr("style")).toBe(`text-align: ${align}`);
    expect(block($, STYLE_CENTERED).attr("style")).toBe("text-align: center");
    expect(block($, INDENTED).attr("style")).toBe("margin-left: 72pt; text-indent: 36pt");
    // Inside table cells indentation is left out (the cell is the layout); alignment is kept.
    expect(block($, "The parties agree as follows.").attr("style")).toBeUndefined();
  });

  it("writes real numbering definitions and alignment in the generated export", async () => {
    const { html } = await convertDocx(await contractDocx(), "contract.docx", DEFAULT_LIMITS);
    const { bytes } = await htmlToDocx({ html, title: "Contract", layout: LAYOUT, images: new Map() });
    const doc = await partXml(bytes, "word/document.xml");
    const numbering = await partXml(bytes, "word/numbering.xml");
    const numIdOf = (text: string) => /<w:numId w:val="(\d+)"\/>/.exec(paragraphOf(doc, text))?.[1];
    // The level a num's paragraph shows: its startOverride, else its abstract level's start and format.
    const levelOf = (text: string) => {
      const numId = numIdOf(text);
      const num = new RegExp(`<w:num w:numId="${numId}"[^>]*>([\\s\\S]*?)</w:num>`).exec(numbering)?.[1] ?? "";
      const abstract = /<w:abstractNumId w:val="(\d+)"/.exec(num)?.[1];
      const lvl0 =
        new RegExp(
          `<w:abstractNum w:abstractNumId="${abstract}"[\\s\\S]*?<w:lvl w:ilvl="0"[^>]*>([\\s\\S]*?)</w:lvl>`,
        ).exec(numbering)?.[1] ?? "";
      return {
        start: Number(/<w:startOverride w:val="(\d+)"/.exec(num)?.[1] ?? /<w:start w:val="(\d+)"/.exec(lvl0)?.[1]),
        format: /<w:numFmt w:val="(\w+)"/.exec(lvl0)?.[1],
      };
    };
    expect(levelOf("Termination")).toEqual({ start: 17, format: "decimal" });
    expect(levelOf("Annex")).toEqual({ start: 3, format: "upperLetter" });
    expect(levelOf("Zero padded")).toEqual({ start: 1, format: "decimalZero" });
    expect(levelOf("Roman from four")).toEqual({ start: 4, format: "upperRoman" });
    expect(numIdOf("Payment")).toBe(numIdOf("Definitions"));
    for (const { text, align } of ALIGNED)
      expect(paragraphOf(doc, text)).toContain(`<w:jc w:val="${align === "justify" ? "both" : align}"/>`);
    expect(paragraphOf(doc, INDENTED)).toMatch(/<w:ind w:left="1440" w:firstLine="720"\/>/);
    // A paragraph numbered by its style keeps its number as text (the generated file has no such style).
    expect(paragraphOf(doc, `${STYLE_NUMBERED.label} ${STYLE_NUMBERED.text}`)).toBeTruthy();
  });

  it("keeps w:numPr as it was on the in-place export of an edited list item, skipped level included", async () => {
    const bytes = await contractDocx();
    const { chunks, source } = await inPlaceSource(bytes, "contract.docx");
    const edited = chunks.map((c) => ({
      ...c,
      html: c.html
        .replace(`>${STYLE_LIST_ITEM.text}<`, `>${STYLE_LIST_ITEM.text} and privacy<`)
        .replace(">Termination<", ">Termination for cause<")
        .replace(">Skipped level item<", ">Skipped level item, edited<"),
    }));
    const written = await writeDocxInPlace(edited.map((c) => c.html).join("\n"), source);
    const before = await partXml(bytes, "word/document.xml");
    const after = await partXml(written.bytes, "word/document.xml");
    const numPr = (p: string) => /<w:numPr>[\s\S]*?<\/w:numPr>/.exec(p)?.[0];
    expect(numPr(paragraphOf(after, "Termination for cause"))).toBe(numPr(paragraphOf(before, "Termination")));
    expect(numPr(paragraphOf(after, "Skipped level item, edited"))).toBe(
      numPr(paragraphOf(before, "Skipped level item")),
    );
    // A paragraph numbered by its style gets no number written into its text.
    const clause = paragraphOf(after, `${STYLE_LIST_ITEM.text} and privacy`);
    expect(clause).toContain('<w:pStyle w:val="ListClause"/>');
    expect(clause).not.toContain("<w:tab/>");
    // Every other numbered paragraph is byte-identical.
    for (const { text } of CONTRACT_ITEMS.filter((i) => i.text !== "Termination" && i.text !== "Skipped level item"))
      expect(paragraphOf(after, text)).toBe(paragraphOf(before, text));
    expect(await partXml(written.bytes, "word/numbering.xml")).toBe(await partXml(bytes, "word/numbering.xml"));
  });
});

describe("numbers Word computes in table cells", () => {
  it("keeps an auto-numbered first column's numbers: each cell's list goes on from the one above", async () => {
    const { html } = await convertDocx(await numberedCellsDocx(), "checklist.docx", DEFAULT_LIMITS);
    const $ = cheerio.load(html, null, false);
    const firstCells = $("tr")
      .map((_, tr) => $(tr).children("td").first())
      .get();
    expect(firstCells.map((td) => $(td).children("ol").attr("start") ?? "1")).toEqual(["1", "2", "3"]);
    expect(firstCells.map((td) => $(td).find("li").length)).toEqual([1, 1, 1]);
    const lines = htmlToText(html).split("\n");
    expect(lines.some((l) => /^3\.(\s|$)/.test(l.trim()))).toBe(true);
    // The generated export numbers them again from real numbering definitions.
    const { bytes } = await htmlToDocx({ html, title: "Checklist", layout: LAYOUT, images: new Map() });
    const numbering = await partXml(bytes, "word/numbering.xml");
    const doc = await partXml(bytes, "word/document.xml");
    const numIds = [...doc.matchAll(/<w:numId w:val="(\d+)"\/>/g)].map((m) => m[1]);
    expect(numIds).toHaveLength(CHECKLIST.length);
    const startOf = (numId: string) => {
      const num = new RegExp(`<w:num w:numId="${numId}"[^>]*>([\\s\\S]*?)</w:num>`).exec(numbering)?.[1] ?? "";
      const abstract = /<w:abstractNumId w:val="(\d+)"/.exec(num)?.[1];
      const lvl0 = new RegExp(`<w:abstractNum w:abstractNumId="${abstract}"[\\s\\S]*?<w:start w:val="(\\d+)"`).exec(
        numbering,
      );
      return Number(/<w:startOverride w:val="(\d+)"/.exec(num)?.[1] ?? lvl0?.[1]);
    };
    expect(numIds.map(startOf)).toEqual([1, 2, 3]);
  });
});

describe("Word numbering on the corpus", () => {
  it("numbers the procurement file's clauses through numbering styles and styles' w:numPr", async () => {
    const { html } = await convertDocx(
      readCorpus("docx/poi-bug65649-large-procurement-tables.docx"),
      "procurement.docx",
      DEFAULT_LIMITS,
    );
    const $ = cheerio.load(html, null, false);
    // Section headings are items of one clause list: 2. "Цели и правовое основание ...".
    const goals = $("li").filter((_, li) => $(li).text().startsWith("Цели и правовое основание"));
    expect(goals.parent().attr("start")).toBe("2");
    // Clauses numbered by their paragraph style carry the number Word shows; the text itself
    // refers to clause 3.2.2.5.1.4 by that number.
    const labels = $("[data-list-label]")
      .map((_, el) => $(el).attr("data-list-label"))
      .get();
    expect(labels).toContain("3.2.2.5.1.4.");
    expect(html).toContain("п. 3.2.2.5.1.4 Задания");
    expect(block($, "Название раздела формируется по следующему алгоритму:").first().attr("data-list-label")).toBe(
      "3.2.2.5.1.4.",
    );
  }, 120_000);

  it("keeps alignment of the statutes' justified articles and the budget's centred figures", async () => {
    for (const [name, align] of [
      ["poi-Bug51170-statutes-pt.docx", "justify"],
      ["poi-IllustrativeCases-budget-tables.docx", "center"],
    ]) {
      const { html } = await convertDocx(readCorpus(`docx/${name}`), name, DEFAULT_LIMITS);
      expect(html.match(new RegExp(`text-align: ${align}`, "g"))?.length ?? 0).toBeGreaterThan(20);
      // The tags that found the paragraphs are gone.
      expect(html).not.toContain("_rl_p");
    }
  });
});
