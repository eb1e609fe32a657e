// Small HTML helpers shared by the converters.
import * as cheerio from "cheerio";

/** The heading elements, h1 (top level) to h6. */
export const HEADING_TAGS = ["h1", "h2", "h3", "h4", "h5", "h6"] as const;

const ESCAPES: Record<string, string> = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" };

/** Escapes text for use in HTML content or a double-quoted attribute. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ESCAPES[c]);
}

/** Collapses whitespace runs to single spaces and trims. */
export function collapseWhitespace(text: string): string {
  return text.replace(/\s+/g, " ").trim();
}

// htmlparser2 in HTML mode: a linear parse. Not cheerio's fragment mode (`load(html, null,
// false)`): parse5 builds the fragment under a context element and then moves every top-level
// node to the root one splice at a time, which is quadratic (a 4 MB export took 16 s).
const LINEAR_PARSE = { xml: { xmlMode: false, decodeEntities: true } } as const;
const HTML_NAMESPACE = "http://www.w3.org/1999/xhtml";

/**
 * Loads an HTML fragment (or a whole page) for querying in time linear in its size; nothing is
 * added around it (no html/head/body). `$.html()` serializes as before: parse5's serializer,
 * which escapes only `&`, `<`, `>`, U+00A0 (and `"` in attributes) and leaves other text as is.
 */
export function loadHtml(html: string): cheerio.CheerioAPI {
  const root = cheerio.load(html, LINEAR_PARSE, false).root()[0];
  // parse5's serializer writes void elements (br, img, hr) without an end tag only in the HTML
  // namespace, which htmlparser2 leaves unset: without it `<br>` came out as `<br></br>`, which
  // every HTML parser reads as two line breaks.
  const stack: DomNode[] = [root];
  while (stack.length > 0) {
    const node = stack.pop() as DomNode;
    if ("attribs" in node && !node.namespace) node.namespace = HTML_NAMESPACE;
    if ("children" in node) for (const child of node.children) stack.push(child);
  }
  // A Document node is taken as the root as it is; default options serialize with parse5.
  return cheerio.load(root, null, false);
}

/** A DOM node as cheerio hands it out (domhandler's AnyNode, which is not our dependency). */
export type DomNode = Parameters<typeof cheerio.contains>[0];
/** An element node (tag, script or style). */
export type DomElement = Extract<DomNode, { attribs: Record<string, string> }>;

/**
 * The elements under `roots` (the roots included) that pass `test`, in document order.
 * A plain walk, linear in the tree: cheerio's `$(selector)` from a root with many top-level
 * nodes goes through css-select's removeSubsets, which is quadratic in that count.
 */
export function findAll(roots: DomNode | DomNode[], test: (el: DomElement) => boolean): DomElement[] {
  const out: DomElement[] = [];
  const stack: DomNode[] = Array.isArray(roots) ? [...roots].reverse() : [roots];
  while (stack.length > 0) {
    const node = stack.pop() as DomNode;
    if ("attribs" in node && test(node)) out.push(node);
    if ("children" in node) for (let i = node.children.length - 1; i >= 0; i--) stack.push(node.children[i]);
  }
  return out;
}

/**
 * Number of elements in HTML that has been through sanitizeHtml (where every literal `<` in
 * text or attribute values is escaped and comments are gone, so each `<letter` opens one).
 */
export function countElements(sanitizedHtml: string): number {
  let n = 0;
  const re = /<[A-Za-z]/g;
  while (re.exec(sanitizedHtml)) n++;
  return n;
}

/** Text of the first h1-h6 in an HTML fragment (whitespace collapsed), or null when none has text. */
export function firstHeadingText(html: string): string | null {
  const $ = loadHtml(html);
  for (const el of findAll($.root()[0], (e) => /^h[1-6]$/.test(e.name))) {
    const text = collapseWhitespace($(el).text());
    if (text) return text.slice(0, 500);
  }
  return null;
}

/**
 * Removes C0 control characters other than tab, newline, carriage return and form feed:
 * they are invalid in HTML and XML and only appear in text files by accident or as binary.
 * Returns the cleaned text and how many characters were dropped.
 */
export function stripControlChars(text: string): { text: string; dropped: number } {
  let dropped = 0;
  // biome-ignore lint/suspicious/noControlCharactersInRegex: matching control characters is the point
  const cleaned = text.replace(/[\u0000-\u0008\u000b\u000e-\u001f\u007f]/g, () => {
    dropped++;
    return "";
  });
  return { text: cleaned, dropped };
}
