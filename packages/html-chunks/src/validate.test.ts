import { describe, expect, it } from "vitest";
import { chunkHtml } from "./chunk-html.js";
import { ChunkError } from "./errors.js";
import { parseChunk, validateChunkHtml } from "./validate.js";

function codeOf(fn: () => unknown): string {
  try {
    fn();
  } catch (err) {
    if (err instanceof ChunkError) return err.code;
    throw err;
  }
  return "no error";
}

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

  it("rejects blank input and HTML that sanitizes to nothing as empty", () => {
    expect(codeOf(() => validateChunkHtml(""))).toBe("empty");
    expect(codeOf(() => validateChunkHtml("  \n"))).toBe("empty");
    expect(codeOf(() => validateChunkHtml("<script>alert(1)</script>"))).toBe("empty");
    expect(codeOf(() => validateChunkHtml("<div> </div>"))).toBe("empty");
  });

  it("rejects plain text, inline elements, several blocks and stray items", () => {
    expect(codeOf(() => validateChunkHtml("just text"))).toBe("not_one_block");
    expect(codeOf(() => validateChunkHtml("<span>inline</span>"))).toBe("not_one_block");
    expect(codeOf(() => validateChunkHtml("<b>bold</b>"))).toBe("not_one_block");
    expect(codeOf(() => validateChunkHtml("<p>a</p><p>b</p>"))).toBe("not_one_block");
    expect(codeOf(() => validateChunkHtml("<p>a</p> tail"))).toBe("not_one_block");
    expect(codeOf(() => validateChunkHtml("<p>a<p>b"))).toBe("not_one_block");
    expect(codeOf(() => validateChunkHtml("<div><p>a</p><p>b</p></div>"))).toBe("not_one_block");
    expect(codeOf(() => validateChunkHtml("<li>item</li>"))).toBe("not_one_block");
  });

  it("rejects unbalanced or misnested tags as malformed", () => {
    expect(codeOf(() => validateChunkHtml("<p><b>x</p>"))).toBe("malformed_html");
    expect(codeOf(() => validateChunkHtml("<div>never closed"))).toBe("malformed_html");
    expect(codeOf(() => validateChunkHtml("<p>x</p></div>"))).toBe("malformed_html");
    expect(codeOf(() => validateChunkHtml("<p>x<ul><li>y</li></ul></p>"))).toBe("malformed_html");
    expect(codeOf(() => validateChunkHtml("<p><i>a<b>b</i></b></p>"))).toBe("malformed_html");
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
