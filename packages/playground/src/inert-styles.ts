// Parsing markup that carries style attributes, even into an inert document (DOMParser, a
// template), makes the browser check each against the page's CSP: style-src 'self' refuses them
// and reports a violation per attribute. So before parsing, `style` attributes are renamed to
// INERT_STYLE; the schema reads them back and applies them through the CSSOM, which CSP allows.

/** The attribute a `style` attribute travels in while the markup is parsed. */
export const INERT_STYLE = "data-rl-style";

/** Elements whose content is raw text: copied through without looking for tags. */
const RAW_TEXT = new Set(["script", "style", "textarea", "title", "xmp", "noscript", "iframe", "noembed", "plaintext"]);

const NAME_START = /[A-Za-z]/;
const SPACE = /[\t\n\f\r ]/;

/** `html` with every start tag's `style` attribute renamed to INERT_STYLE; everything else verbatim. */
export function inertStyles(html: string): string {
  let out = "";
  let i = 0;
  while (i < html.length) {
    const lt = html.indexOf("<", i);
    if (lt < 0) {
      out += html.slice(i);
      break;
    }
    out += html.slice(i, lt);
    if (html.startsWith("<!--", lt)) {
      const end = html.indexOf("-->", lt + 4);
      const stop = end < 0 ? html.length : end + 3;
      out += html.slice(lt, stop);
      i = stop;
      continue;
    }
    if (!NAME_START.test(html[lt + 1] ?? "")) {
      out += "<";
      i = lt + 1;
      continue;
    }
    const { text, end, name } = startTag(html, lt);
    out += text;
    i = end;
    if (RAW_TEXT.has(name)) {
      const close = html.toLowerCase().indexOf(`</${name}`, i);
      const stop = close < 0 ? html.length : close;
      out += html.slice(i, stop);
      i = stop;
    }
  }
  return out;
}

/** The start tag at `lt` rewritten, the index after it and its lower-case name. */
function startTag(html: string, lt: number): { text: string; end: number; name: string } {
  let j = lt + 1;
  while (j < html.length && !SPACE.test(html[j]) && html[j] !== ">" && html[j] !== "/") j++;
  const name = html.slice(lt + 1, j).toLowerCase();
  let text = html.slice(lt, j);
  while (j < html.length) {
    const c = html[j];
    if (c === ">") return { text: `${text}>`, end: j + 1, name };
    if (SPACE.test(c) || c === "/") {
      text += c;
      j++;
      continue;
    }
    // An attribute: its name, then optionally `=` and a quoted or unquoted value.
    let k = j;
    while (k < html.length && !SPACE.test(html[k]) && !"/>=".includes(html[k])) k++;
    if (k === j) k++; // a stray "=": keep it and go on
    const attr = html.slice(j, k);
    text += attr.toLowerCase() === "style" ? INERT_STYLE : attr;
    j = k;
    while (j < html.length && SPACE.test(html[j])) text += html[j++];
    if (html[j] !== "=") continue;
    text += html[j++];
    while (j < html.length && SPACE.test(html[j])) text += html[j++];
    const quote = html[j];
    if (quote === '"' || quote === "'") {
      const close = html.indexOf(quote, j + 1);
      const stop = close < 0 ? html.length : close + 1;
      text += html.slice(j, stop);
      j = stop;
    } else {
      while (j < html.length && !SPACE.test(html[j]) && html[j] !== ">") text += html[j++];
    }
  }
  return { text, end: j, name };
}
