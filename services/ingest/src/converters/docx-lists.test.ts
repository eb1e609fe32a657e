import * as cheerio from "cheerio";
import { describe, expect, it } from "vitest";
import { htmlToText } from "../export/to-text.js";
import { DEFAULT_LIMITS } from "../formats.js";
import { readCorpus } from "../testing/corpus.js";
import { LIST_ITEMS, listsDocx } from "../testing/generated-docs.js";
import { convertDocx } from "./docx.js";

const load = async (bytes: Buffer) =>
  cheerio.load((await convertDocx(bytes, "lists.docx", DEFAULT_LIMITS)).html, null, false);
// The list holding the (last) item whose own text, before any nested list, is `text`.
const listOf = ($: cheerio.CheerioAPI, text: string) =>
  $("li")
    .filter((_, li) => $(li).contents().first().text() === text)
    .last()
    .parent();

describe("docx list numbering", () => {
  it("keeps Word's start and number format: decimal from 17, lowerLetter, upperRoman continued after a paragraph", async () => {
    const $ = await load(await listsDocx());
    const from17 = listOf($, LIST_ITEMS.seventeen[0]);
    expect(from17.prop("tagName")).toBe("OL");
    expect(from17.attr("start")).toBe("17");
    expect(from17.attr("type")).toBeUndefined();
    expect(
      from17
        .children("li")
        .map((_, li) => $(li).text())
        .get(),
    ).toEqual(LIST_ITEMS.seventeen);

    // Two Word lists in a row are two HTML lists, each numbered its own way.
    const letters = listOf($, LIST_ITEMS.letters[0]);
    expect(letters.attr("type")).toBe("a");
    expect(letters.attr("start")).toBeUndefined();
    expect(
      letters
        .children("li")
        .map((_, li) => $(li).text())
        .get(),
    ).toEqual(LIST_ITEMS.letters);
    const romans = listOf($, LIST_ITEMS.romans[0]);
    expect(romans.attr("type")).toBe("I");
    expect(romans.children("li")).toHaveLength(2);

    // After the interruption the roman list goes on at III.
    const continued = listOf($, LIST_ITEMS.continued[0]);
    expect(continued.attr("type")).toBe("I");
    expect(continued.attr("start")).toBe("3");
    expect(continued.prev().text()).toBe("An interruption of the roman list.");

    // The txt export numbers them as Word does.
    const text = htmlToText($.html());
    for (const line of [
      "17. Seventeenth",
      "18. Eighteenth",
      "a) Alpha",
      "b) Bravo",
      "I. Roman one",
      "III. Roman three",
    ])
      expect(text.split("\n")).toContain(line);
  });

  it("numbers the corpus's interrupted, nested and restarted lists as Word does, without empty wrapper items", async () => {
    const $ = await load(readCorpus("docx/tika-testWORD_numbered_list.docx"));
    // No item is only a holder of deeper lists (mammoth's wrappers show as empty numbers).
    const empty = $("li").filter((_, li) => $(li).clone().children("ol, ul").remove().end().text().trim() === "");
    expect(empty).toHaveLength(0);
    // "List" is the third item of level 3 (lowerRoman) after a table interrupted the list.
    expect(listOf($, "List").attr("start")).toBe("3");
    expect(listOf($, "List").attr("type")).toBe("i");
    // The list starting at 6, and the item that switches to a lowerLetter list starting at 5 ("e.").
    expect(listOf($, "six").attr("start")).toBe("6");
    expect(listOf($, "seven e").attr("type")).toBe("a");
    expect(listOf($, "seven e").attr("start")).toBe("5");
    // An upperRoman list continued after a paragraph: "bar" is II.
    expect(listOf($, "yet").attr("type")).toBe("I");
    expect(listOf($, "bar").attr("type")).toBe("I");
    expect(listOf($, "bar").attr("start")).toBe("2");
    // A list continued over a section break and other lists: "page break list 3" is 3.
    expect(listOf($, "page break list 3").attr("start")).toBe("3");
    expect(listOf($, "A").attr("type")).toBe("A");
    // Nesting is kept: "A ii a" sits in "A ii", in "A".
    expect(
      listOf($, "A ii a")
        .parents("li")
        .map((_, li) => $(li).contents().first().text())
        .get(),
    ).toEqual(["A ii", "A"]);
  });
});
