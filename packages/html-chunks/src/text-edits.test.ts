import { describe, expect, it } from "vitest";
import { chunkHtml } from "./chunk-html.js";
import { ChunkError } from "./errors.js";
import { addTableRow, replaceText, wrapPhrase } from "./text-edits.js";

describe("addTableRow", () => {
  it("appends to the last tbody, copying cell tags and attributes but not spans", () => {
    const table =
      `<table data-chunk-id="t1" class="grid"><thead><tr><th>Name</th><th>Qty</th><th>Note</th></tr></thead>` +
      `<tbody><tr class="row" style="background:#eee"><th scope="row" style="font-weight:bold">A</th><td class="num" rowspan="2">1</td><td colspan="1" id="x">n</td></tr></tbody></table>`;
    const out = addTableRow(table, ["B & <C>", "2"]);
    expect(out).toBe(
      `<table data-chunk-id="t1" class="grid"><thead><tr><th>Name</th><th>Qty</th><th>Note</th></tr></thead>` +
        `<tbody><tr class="row" style="background:#eee"><th scope="row" style="font-weight:bold">A</th><td class="num" rowspan="2">1</td><td colspan="1" id="x">n</td></tr>` +
        `<tr class="row" style="background:#eee"><th scope="row" style="font-weight:bold">B &amp; &lt;C&gt;</th><td class="num">2</td><td></td></tr></tbody></table>`,
    );
  });

  it("pads to the widest row counting colspans, and keeps indentation", () => {
    const table = `<table>\n  <tr><td colspan="2">wide</td><td>c</td></tr>\n  <tr><td>a</td></tr>\n</table>`;
    expect(addTableRow(table, ["x"])).toBe(
      `<table>\n  <tr><td colspan="2">wide</td><td>c</td></tr>\n  <tr><td>a</td></tr>\n  <tr><td>x</td><td></td><td></td></tr>\n</table>`,
    );
  });

  it("adds a row to an empty table and fails without a table", () => {
    expect(addTableRow("<table></table>", ["a", "b"])).toBe("<table><tr><td>a</td><td>b</td></tr></table>");
    expect(() => addTableRow("<p>no table</p>", ["a"])).toThrow(ChunkError);
  });

  it("keeps a wrapper around the table", () => {
    expect(
      addTableRow(`<figure data-chunk-id="f"><table><tr><td>a</td></tr></table><figcaption>c</figcaption></figure>`, [
        "b",
      ]),
    ).toBe(
      `<figure data-chunk-id="f"><table><tr><td>a</td></tr><tr><td>b</td></tr></table><figcaption>c</figcaption></figure>`,
    );
  });

  it("produces a valid chunk that re-chunks to itself", () => {
    const [chunk] = chunkHtml(
      `<table style="width:50%"><tbody><tr><td style="color:red">a</td></tr></tbody></table>`,
    ).chunks;
    const out = addTableRow(chunk.html, ["b"]);
    expect(chunkHtml(out).chunks).toEqual([{ chunkId: chunk.chunkId, html: out }]);
  });
});

describe("wrapPhrase", () => {
  it("wraps occurrences in text nodes only, keeping markup and attributes", () => {
    const html = `<p data-chunk-id="p1" title="budget" style="color:red">The budget, the <i>budget</i> and <a href="/budget">budget link</a>.</p>`;
    const out = wrapPhrase(html, "budget", "strong");
    expect(out.count).toBe(3);
    expect(out.html).toBe(
      `<p data-chunk-id="p1" title="budget" style="color:red">The <strong>budget</strong>, the <i><strong>budget</strong></i> and <a href="/budget"><strong>budget</strong> link</a>.</p>`,
    );
  });

  it("skips text already inside the tag or its twin, and code", () => {
    const html = `<p><b>key</b> key <code>key</code> <strong>key</strong></p>`;
    expect(wrapPhrase(html, "key", "strong")).toEqual({
      html: `<p><b>key</b> <strong>key</strong> <code>key</code> <strong>key</strong></p>`,
      count: 1,
    });
    expect(wrapPhrase(html, "key", "em").count).toBe(4 - 1);
  });

  it("honours case sensitivity and leaves HTML untouched when nothing matches", () => {
    const html = `<p>Alpha  alpha&nbsp;ALPHA</p>`;
    expect(wrapPhrase(html, "alpha", "em").count).toBe(1);
    expect(wrapPhrase(html, "alpha", "em", { caseSensitive: false }).count).toBe(3);
    expect(wrapPhrase(html, "missing", "em")).toEqual({ html, count: 0 });
    expect(wrapPhrase(html, "", "em")).toEqual({ html, count: 0 });
  });

  it("does not find a phrase split across elements (documented limitation)", () => {
    expect(wrapPhrase("<p>big <b>deal</b></p>", "big deal", "em").count).toBe(0);
  });
});

describe("replaceText", () => {
  it("replaces in text nodes only and escapes the replacement", () => {
    const html = `<p class="cat" data-x="cat"><span style="color:cat">cat</span> Cat cat&amp;dog</p>`;
    const out = replaceText(html, "cat", "<dog>");
    expect(out.count).toBe(2);
    expect(out.html).toBe(
      `<p class="cat" data-x="cat"><span style="color:cat">&lt;dog&gt;</span> Cat &lt;dog&gt;&amp;dog</p>`,
    );
  });

  it("supports case-insensitive search and literal $ in replacements", () => {
    const out = replaceText("<p>Price PRICE price</p>", "price", "$1 cost", { caseSensitive: false });
    expect(out).toEqual({ html: "<p>$1 cost $1 cost $1 cost</p>", count: 3 });
  });

  it("works inside table cells without disturbing the table", () => {
    const table = `<table data-chunk-id="t"><tr><td colspan="2" style="x:y">old value</td></tr></table>`;
    expect(replaceText(table, "old", "new").html).toBe(
      `<table data-chunk-id="t"><tr><td colspan="2" style="x:y">new value</td></tr></table>`,
    );
  });

  it("returns the input unchanged when nothing matches", () => {
    const html = `<p  class=x>no match</p>`;
    expect(replaceText(html, "zzz", "y")).toEqual({ html, count: 0 });
  });
});
