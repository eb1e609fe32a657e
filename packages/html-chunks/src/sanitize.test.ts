import { describe, expect, it } from "vitest";
import { sanitizeHtml } from "./sanitize.js";

describe("sanitizeHtml", () => {
  it("drops NUL characters, which Postgres text cannot store", () => {
    expect(sanitizeHtml("<p>Pay\u0000 in <b>30\u0000</b> days.</p>")).toBe("<p>Pay in <b>30</b> days.</p>");
  });
  it("removes scripts, event handlers and javascript: URLs", () => {
    const out = sanitizeHtml(
      `<p onclick="steal()" onmouseover="x()">Hi <a href="javascript:alert(1)">a</a><a href=" JaVaScRiPt:alert(1)">b</a><a href="vbscript:msgbox">c</a></p><script>alert("x")</script>`,
    );
    expect(out).not.toMatch(/script|onclick|onmouseover|javascript|vbscript|alert|steal/i);
    expect(out).toContain("<p>Hi <a>a</a><a>b</a><a>c</a></p>");
  });

  it("drops iframes, objects, embeds, forms and their fallback text", () => {
    const out = sanitizeHtml(
      `<p>keep</p><iframe src="https://evil">frame text</iframe><object data="x">obj text</object><embed src="y"><svg><text>svg text</text></svg><form><input value="v"><button>Go</button></form>`,
    );
    expect(out).not.toMatch(/iframe|object|embed|svg|frame text|obj text|svg text|<form|<input|<button/);
    expect(out).toContain("<p>keep</p>");
  });

  it("keeps data:image in img src but drops other data: URLs", () => {
    const out = sanitizeHtml(
      `<img src="data:image/png;base64,iVBOR" alt="ok"><img src="data:text/html;base64,PHNjcmlwdD4=" alt="bad"><a href="data:text/html,x">l</a>`,
    );
    expect(out).toContain(`<img src="data:image/png;base64,iVBOR" alt="ok" />`);
    expect(out).toContain(`<img alt="bad" />`);
    expect(out).toContain("<a>l</a>");
  });

  it("keeps tables with spans, widths and alignment", () => {
    const table = `<table class="grid" style="border-collapse: collapse"><caption>Cap</caption><colgroup><col span="2" width="50%"></colgroup><thead><tr><th colspan="2" align="center">H</th></tr></thead><tbody><tr><td rowspan="2" width="30" style="color: red; --custom: 1">a</td><td>b</td></tr></tbody><tfoot><tr><td>f</td></tr></tfoot></table>`;
    const out = sanitizeHtml(table);
    for (const fragment of [
      `<table class="grid" style="border-collapse: collapse">`,
      "<caption>Cap</caption>",
      `<col span="2" width="50%" />`,
      `<th colspan="2" align="center">H</th>`,
      `<td rowspan="2" width="30" style="color: red; --custom: 1">a</td>`,
      "<tfoot><tr><td>f</td></tr></tfoot>",
    ]) {
      expect(out).toContain(fragment);
    }
  });

  it("keeps every style property verbatim, classes, ids and data-* attributes", () => {
    const html = `<div id="d1" class="a b" data-chunk-id="c_1" data-foo-bar="x" style="font-family: 'Comic Sans'; margin:0 auto;position:absolute"><span style="background:url(https://x/y.png)">t</span></div>`;
    expect(sanitizeHtml(html)).toBe(html);
  });

  it("drops style attributes that can run code", () => {
    const out = sanitizeHtml(
      `<p style="width: expression(alert(1))">a</p><p style="background:url(javascript:alert(1))">b</p>`,
    );
    expect(out).toBe("<p>a</p><p>b</p>");
  });

  it("keeps formatting, lists and links", () => {
    const html = `<ol start="3" type="a"><li value="5"><b>b</b><i>i</i><u>u</u><s>s</s><strike>st</strike><del>d</del><ins>n</ins><mark>m</mark><small>sm</small><sup>1</sup><sub>2</sub><font color="red" face="Arial" size="3">f</font></li></ol><dl><dt>t</dt><dd>d</dd></dl><blockquote><pre><code>x</code></pre></blockquote><hr /><figure><img src="https://x/a.png" alt="a" width="10" height="20" title="t" /><figcaption>c</figcaption></figure><a href="https://x" title="t" target="_blank" rel="noopener">l</a><aside><nav><main><header><footer>x</footer></header></main></nav></aside>`;
    expect(sanitizeHtml(html)).toBe(html);
  });

  it("drops the document head, comments and doctype", () => {
    const out = sanitizeHtml(
      `<!DOCTYPE html><html><head><title>Secret title</title><style>p{color:red}</style></head><body><!-- note --><p>Body</p></body></html>`,
    );
    expect(out).toBe("<p>Body</p>");
  });
});
