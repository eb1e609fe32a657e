import { describe, expect, it } from "vitest";
import { chunkHtml } from "./chunk-html.js";
import { ChunkError } from "./errors.js";
import { errorCode } from "./test-support/error-code.js";
import { parseChunk, validateChunkHtml } from "./validate.js";

const codeOf = (fn: () => unknown) => errorCode(fn, ChunkError);

/** Inputs validateChunkHtml refuses, by code: blank or sanitized to nothing, not one block, malformed. */
const REFUSED: [code: string, inputs: string[]][] = [
  ["empty", ["", "  \n", "<script>alert(1)</script>", "<div> </div>"]],
  ["not_one_block", ["just text", "<span>inline</span>", "<b>bold</b>", "<p>a</p><p>b</p>", "<p>a</p> tail"]],
  ["not_one_block", ["<p>a<p>b", "<div><p>a</p><p>b</p></div>", "<li>item</li>"]],
  ["malformed_html", ["<p><b>x</p>", "<div>never closed", "<p>x</p></div>", "<p>x<ul><li>y</li></ul></p>"]],
  ["malformed_html", ["<p><i>a<b>b</i></b></p>"]],
];

describe("validateChunkHtml", () => {
  it("normalizes one block and forces the given id", () => {
    expect(validateChunkHtml(`  <p class="x" data-chunk-id="old">Hello <b>you</b></p>\n`, "c_new")).toBe(
      `<p data-chunk-id="c_new" class="x">Hello <b>you</b></p>`,
    );
  });

  it("keeps a valid existing id, or mints one", () => {
    expect(validateChunkHtml(`<h2 data-chunk-id="keep">T</h2>`)).toBe(`<h2 data-chunk-id="keep">T</h2>`);
    expect(validateChunkHtml("<h2>T</h2>")).toMatch(/^<h2 data-chunk-id="c_[0-9a-v]{10}">T<\/h2>$/);
  });

  it("sanitizes the block and strips nested ids", () => {
    expect(
      validateChunkHtml(
        `<div onclick="x()" style="color:red"><span data-chunk-id="n">a</span><script>bad()</script></div>`,
        "c1",
      ),
    ).toBe(`<div data-chunk-id="c1" style="color:red"><span>a</span></div>`);
  });

  it("accepts tables, lists and other block chunks", () => {
    const table = `<table style="width:50%"><tr><td colspan="2">x</td></tr></table>`;
    expect(validateChunkHtml(table, "t1")).toBe(
      `<table data-chunk-id="t1" style="width:50%"><tr><td colspan="2">x</td></tr></table>`,
    );
    expect(validateChunkHtml("<ul><li>a<li>b</ul>", "l1")).toBe(`<ul data-chunk-id="l1"><li>a</li><li>b</li></ul>`);
    expect(validateChunkHtml("<hr>", "h")).toBe(`<hr data-chunk-id="h">`);
  });

  it.each(REFUSED)("rejects as %s", (code, inputs) => {
    expect(inputs.map((html) => codeOf(() => validateChunkHtml(html)))).toEqual(inputs.map(() => code));
  });

  it("accepts valid HTML with optional end tags, void and self-closing elements", () => {
    expect(
      validateChunkHtml(
        `<p>a<br/>b<img src="/v1/media/abababababababababababababababababababababababababababababababab" alt=""></p>`,
        "p",
      ),
    ).toBe(
      `<p data-chunk-id="p">a<br>b<img src="/v1/media/abababababababababababababababababababababababababababababababab" alt=""></p>`,
    );
    expect(validateChunkHtml("<dl><dt>t<dd>d</dl>", "d")).toBe(`<dl data-chunk-id="d"><dt>t</dt><dd>d</dd></dl>`);
  });

  it("parseChunk returns the record with its id", () => {
    expect(parseChunk(`<p data-chunk-id="k1">x</p>`)).toEqual({ chunkId: "k1", html: `<p data-chunk-id="k1">x</p>` });
    expect(parseChunk("<p>x</p>", "given")).toEqual({ chunkId: "given", html: `<p data-chunk-id="given">x</p>` });
  });

  it("rejects an invalid chunk id", () => {
    expect(codeOf(() => validateChunkHtml("<p>a</p>", "bad id"))).toBe("invalid_argument");
  });

  it("agrees with chunkHtml: a validated chunk re-chunks to itself", () => {
    for (const html of [
      "<p>a &amp; b</p>",
      `<div class="c">inline <i>x</i></div>`,
      "<table><tr><td>1</td></tr></table>",
    ]) {
      const valid = validateChunkHtml(html, "c_x");
      expect(chunkHtml(valid).chunks).toEqual([{ chunkId: "c_x", html: valid }]);
      expect(validateChunkHtml(valid, "c_x")).toBe(valid);
    }
  });
});
