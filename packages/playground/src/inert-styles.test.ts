import { describe, expect, it } from "vitest";
import { INERT_STYLE, inertStyles } from "./inert-styles.js";

describe("inertStyles", () => {
  it("renames style attributes of start tags, quoted, unquoted or in any case", () => {
    expect(inertStyles('<p style="color: red">x</p>')).toBe(`<p ${INERT_STYLE}="color: red">x</p>`);
    expect(inertStyles("<td STYLE='width:2in' colspan=2>a</td>")).toBe(
      `<td ${INERT_STYLE}='width:2in' colspan=2>a</td>`,
    );
    expect(inertStyles("<span style=color:red>a</span>")).toBe(`<span ${INERT_STYLE}=color:red>a</span>`);
    expect(inertStyles('<img src="a.png" style = "x"/>')).toBe(`<img src="a.png" ${INERT_STYLE} = "x"/>`);
  });

  it("leaves text, other attributes, values that mention style, comments and raw text alone", () => {
    const same = [
      '<p>style="color: red" is text</p>',
      '<p title="style=&quot;x&quot;" data-style="y">a &lt; b</p>',
      '<!-- <p style="x"> -->',
      '<style>p[style="x"] { color: red }</style>',
      "a < b and 1<2",
      '<p data-chunk-id="c1">unterminated',
    ];
    for (const html of same) expect(inertStyles(html)).toBe(html);
  });

  it("keeps a value holding > and the rest of the document after it", () => {
    expect(inertStyles('<p title="a>b" style="c">d</p><p style="e">f</p>')).toBe(
      `<p title="a>b" ${INERT_STYLE}="c">d</p><p ${INERT_STYLE}="e">f</p>`,
    );
  });
});
