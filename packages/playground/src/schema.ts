// The ProseMirror schema of a Redline document as the playground shows it: generic node types
// that keep each element's tag and attributes (data-chunk-id, data-part, class, style, colspan…)
// so a chunk renders as the server wrote it and can be found by its chunk id for decorations.
// Text blocks (p, h1-h6, pre…) hold inline content; containers (lists, tables, div…) hold blocks.
import { type DOMOutputSpec, DOMParser, type Mark, type Node, Schema } from "prosemirror-model";
import { INERT_STYLE, inertStyles } from "./inert-styles.js";

/** An element's attributes as a plain record, in document order. */
export type HtmlAttrs = Record<string, string>;

const TEXTBLOCK_TAGS = ["p", "h1", "h2", "h3", "h4", "h5", "h6", "pre", "figcaption", "caption", "dt", "dd", "address"];
const CONTAINER_TAGS = [
  "div",
  "section",
  "article",
  "aside",
  "header",
  "footer",
  "nav",
  "main",
  "blockquote",
  "figure",
  "ul",
  "ol",
  "li",
  "dl",
  "table",
  "thead",
  "tbody",
  "tfoot",
  "tr",
  "td",
  "th",
  "colgroup",
  "details",
  "summary",
];
const LEAF_BLOCK_TAGS = ["hr", "col"];
const MARK_TAGS = [
  "a",
  "strong",
  "b",
  "em",
  "i",
  "u",
  "s",
  "strike",
  "del",
  "ins",
  "sub",
  "sup",
  "code",
  "span",
  "mark",
  "small",
  "big",
  "abbr",
  "cite",
  "q",
  "kbd",
  "var",
  "samp",
  "font",
  "time",
];

/** Attributes that would make the read-only view act: editing, focus, embedded documents. */
const DROPPED = new Set(["srcdoc", "formaction", "contenteditable", "autofocus", "tabindex", "draggable"]);

/** An element's attributes, without event handlers, DROPPED ones and URLs that could run script. */
function safeAttrs(dom: HTMLElement): HtmlAttrs {
  const out: HtmlAttrs = {};
  for (const { name, value } of Array.from(dom.attributes)) {
    const lower = name.toLowerCase();
    if (lower.startsWith("on") || DROPPED.has(lower)) continue;
    if (lower === INERT_STYLE) {
      out.style = value;
      continue;
    }
    if ((lower === "href" || lower === "src" || lower === "xlink:href") && /^\s*(javascript|vbscript):/i.test(value))
      continue;
    out[name] = value;
  }
  return out;
}

/** Prefix of a document element's id on the page. */
const DOC_ID_PREFIX = "doc-";

/**
 * Renders an element through the DOM API: attributes with setAttribute, except `style`, which goes
 * through the CSSOM (el.style.cssText) because the page's CSP (style-src 'self') refuses style
 * attributes in markup but not styles set from a script of the page.
 */
export function element(tag: string, attrs: HtmlAttrs): HTMLElement {
  const el = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs)) {
    const lower = name.toLowerCase();
    if (lower === "style") el.style.cssText = value;
    // A document's ids live in their own namespace so they never shadow the page's (#status…);
    // in-document links (footnotes) follow.
    else if (lower === "id") el.id = `${DOC_ID_PREFIX}${value}`;
    else if (lower === "href" && value.startsWith("#")) el.setAttribute("href", `#${DOC_ID_PREFIX}${value.slice(1)}`);
    else {
      try {
        el.setAttribute(name, value);
      } catch {
        // A name the DOM refuses (e.g. from a foreign namespace): the view does without it.
      }
    }
  }
  return el;
}

function rendered(tag: string, attrs: HtmlAttrs, hole: boolean): DOMOutputSpec {
  const dom = element(tag, attrs);
  return hole ? { dom, contentDOM: dom } : dom;
}

const tagAttrs = { tag: { default: "p" }, attrs: { default: {} } };

/** The schema: doc, textblock, container, leaf, image, hard_break, text, and one generic mark. */
export const schema = new Schema({
  nodes: {
    doc: { content: "block*" },
    textblock: {
      group: "block",
      content: "inline*",
      attrs: tagAttrs,
      parseDOM: TEXTBLOCK_TAGS.map((tag) => ({
        tag,
        preserveWhitespace: tag === "pre" ? ("full" as const) : undefined,
        getAttrs: (dom: HTMLElement) => ({ tag, attrs: safeAttrs(dom) }),
      })),
      toDOM: (node) => rendered(node.attrs.tag, node.attrs.attrs, true),
    },
    container: {
      group: "block",
      content: "block*",
      attrs: tagAttrs,
      parseDOM: CONTAINER_TAGS.map((tag) => ({
        tag,
        getAttrs: (dom: HTMLElement) => ({ tag, attrs: safeAttrs(dom) }),
      })),
      toDOM: (node) => rendered(node.attrs.tag, node.attrs.attrs, true),
    },
    leaf: {
      group: "block",
      atom: true,
      attrs: tagAttrs,
      parseDOM: LEAF_BLOCK_TAGS.map((tag) => ({
        tag,
        getAttrs: (dom: HTMLElement) => ({ tag, attrs: safeAttrs(dom) }),
      })),
      toDOM: (node) => rendered(node.attrs.tag, node.attrs.attrs, false),
    },
    image: {
      group: "inline",
      inline: true,
      atom: true,
      attrs: { attrs: { default: {} } },
      parseDOM: [{ tag: "img", getAttrs: (dom: HTMLElement) => ({ attrs: safeAttrs(dom) }) }],
      // Outside the view's node view (a proposed block): only inline images keep their source.
      toDOM: (node) => {
        const attrs: HtmlAttrs = { ...node.attrs.attrs };
        if (!/^data:image\//i.test(attrs.src ?? "")) delete attrs.src;
        return rendered("img", attrs, false);
      },
    },
    hard_break: {
      group: "inline",
      inline: true,
      selectable: false,
      parseDOM: [{ tag: "br" }],
      toDOM: () => ["br"],
    },
    text: { group: "inline" },
  },
  marks: {
    inline: {
      attrs: tagAttrs,
      // Several of one tag with other attributes (nested spans) may wrap the same text.
      excludes: "",
      parseDOM: MARK_TAGS.map((tag) => ({ tag, getAttrs: (dom: HTMLElement) => ({ tag, attrs: safeAttrs(dom) }) })),
      toDOM: (mark: Mark) => rendered(mark.attrs.tag, mark.attrs.attrs, true),
    },
  },
});

const parser = DOMParser.fromSchema(schema);

/**
 * Parses a document's HTML into a ProseMirror doc. The markup is parsed in an inert document
 * (window.DOMParser): nothing in it loads or runs while it is read; its style attributes travel
 * renamed (inert-styles.ts) so the CSP has nothing to refuse.
 */
export function parseHtml(html: string): Node {
  const markup = `<!doctype html><body>${inertStyles(html)}</body>`;
  const inert = new window.DOMParser().parseFromString(markup, "text/html");
  return parser.parse(inert.body);
}

/** The chunk id of a node (its data-chunk-id attribute), if it has one. */
export function chunkIdOf(node: Node): string | undefined {
  const attrs = node.attrs.attrs as HtmlAttrs | undefined;
  return attrs?.["data-chunk-id"];
}
