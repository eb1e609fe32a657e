import sanitize from "sanitize-html";
import { words } from "./tags.js";

// Everything a formatted document legitimately uses; scripts, frames, embeds,
// forms and media are absent, so they are dropped (their text kept, except for
// NON_TEXT_TAGS below).
const ALLOWED_TAGS = words(
  "h1 h2 h3 h4 h5 h6 p br hr div span section article header footer aside nav main address hgroup " +
    "center ul ol li menu dl dt dd table thead tbody tfoot tr td th caption colgroup col blockquote pre " +
    "code figure figcaption img a b strong i em u s strike del ins mark small big font sup sub abbr cite " +
    "q kbd samp var dfn time tt wbr",
);

// Presentational table attributes that old documents rely on for layout.
const CELL_ATTRIBUTES = [
  "colspan",
  "rowspan",
  "width",
  "height",
  "align",
  "valign",
  "bgcolor",
  "scope",
  "headers",
  "nowrap",
];

const ALLOWED_ATTRIBUTES: sanitize.IOptions["allowedAttributes"] = {
  "*": ["class", "id", "style", "title", "lang", "dir", "data-*"],
  a: ["href", "name", "target", "rel"],
  img: ["src", "alt", "width", "height"],
  table: ["width", "height", "align", "border", "cellpadding", "cellspacing", "bgcolor", "summary"],
  td: CELL_ATTRIBUTES,
  th: CELL_ATTRIBUTES,
  tr: ["align", "valign", "bgcolor", "height"],
  thead: ["align", "valign"],
  tbody: ["align", "valign"],
  tfoot: ["align", "valign"],
  col: ["span", "width", "align", "valign"],
  colgroup: ["span", "width", "align", "valign"],
  ol: ["start", "type", "reversed"],
  ul: ["type"],
  li: ["value", "type"],
  font: ["color", "face", "size"],
  blockquote: ["cite"],
  q: ["cite"],
  del: ["cite", "datetime"],
  ins: ["cite", "datetime"],
  time: ["datetime"],
  p: ["align"],
  div: ["align"],
  hr: ["width", "size", "align", "noshade"],
  h1: ["align"],
  h2: ["align"],
  h3: ["align"],
  h4: ["align"],
  h5: ["align"],
  h6: ["align"],
};

// Disallowed elements whose text must not leak into the document: code, the
// <head>, foreign content and fallback text of embeds and media.
const NON_TEXT_TAGS = words(
  "script style textarea option select datalist noscript template head title iframe frame object embed " +
    "applet svg math video audio canvas xmp noembed",
);

// `col` and `wbr` are void: without this, sanitize-html would print `</col>`.
const SELF_CLOSING = ["img", "br", "hr", "col", "wbr"];

// CSS that can run code or pull behaviour in old engines; a style attribute
// containing any of these is dropped whole (properties are never filtered).
const DANGEROUS_STYLE = /expression\s*\(|javascript:|vbscript:|-moz-binding|behavior\s*:/i;

const OPTIONS: sanitize.IOptions = {
  allowedTags: ALLOWED_TAGS,
  allowedAttributes: ALLOWED_ATTRIBUTES,
  nonTextTags: NON_TEXT_TAGS,
  selfClosing: SELF_CLOSING,
  allowedSchemes: ["http", "https", "mailto", "tel", "ftp"],
  allowedSchemesByTag: { img: ["http", "https", "data"] },
  allowedSchemesAppliedToAttributes: ["href", "src", "cite"],
  allowProtocolRelative: true,
  // Keep style attributes verbatim: parsing them through postcss rewrites the
  // text (and is slow); only DANGEROUS_STYLE is screened, in transformTags.
  parseStyleAttributes: false,
  disallowedTagsMode: "discard",
  transformTags: { "*": screenAttributes },
};

/**
 * Sanitizes untrusted HTML for storage and display.
 * Drops scripts, frames/objects/embeds, forms, `on*` handlers, `javascript:`/
 * `vbscript:` URLs and `data:` URLs other than `data:image/*` in `<img src>`;
 * keeps tables (with colspan/rowspan/width/align), inline styles verbatim,
 * classes, ids, every `data-*` attribute and ordinary formatting.
 * Comments, doctype and the document <head> are removed, and so are NUL characters (HTML
 * parsers drop them, and Postgres text cannot store them). Never throws.
 */
export function sanitizeHtml(html: string): string {
  return sanitize(html.replaceAll("\0", ""), OPTIONS);
}

function screenAttributes(tagName: string, attribs: sanitize.Attributes): sanitize.Tag {
  const style = attribs.style;
  if (style !== undefined && DANGEROUS_STYLE.test(stripCssNoise(style))) delete attribs.style;
  if (tagName === "img" && attribs.src !== undefined && isNonImageDataUrl(attribs.src)) delete attribs.src;
  return { tagName, attribs };
}

// CSS escapes and comments can spell "expression" in pieces; remove them first.
function stripCssNoise(style: string): string {
  return style.replace(/\/\*[\s\S]*?\*\//g, "").replace(/\\/g, "");
}

function isNonImageDataUrl(src: string): boolean {
  // Same normalisation as sanitize-html's scheme check: browsers skip controls/spaces.
  // biome-ignore lint/suspicious/noControlCharactersInRegex: browsers ignore these in URLs, so must we.
  const url = src.replace(/[\x00-\x20]+/g, "").toLowerCase();
  return url.startsWith("data:") && !url.startsWith("data:image/");
}
