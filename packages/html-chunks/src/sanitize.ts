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
  // Hidden text imported from Word (w:vanish); screenAttributes keeps `hidden` only in the form
  // `<span data-hidden="true" hidden>`, never on a block.
  span: ["hidden"],
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

// Inline CSS declarations dropped whole (values are checked after CSS escapes and comments are
// removed): code in old engines, and anything fetching a resource — a remote url() is a web
// beacon that fires when an organization member opens the document.
const DANGEROUS_DECLARATION =
  /expression\s*\(|javascript:|vbscript:|-moz-binding|behavior\s*:|url\s*\(|image-set\s*\(|image\s*\(|cross-fade\s*\(|element\s*\(|src\s*\(|@import/i;

// `position` values that let a block escape the page and cover the application (fixed/sticky
// overlays, absolute boxes placed anywhere); static and relative stay in the flow.
const KEPT_POSITIONS = new Set(["static", "relative", "inherit", "initial", "unset", "revert"]);

// Properties dropped whatever their value: a document needs no stacking order above the app.
const DROPPED_PROPERTIES = new Set(["z-index"]);

// Images: the media the ingest stores (`/v1/media/<sha256>`, the exact form it writes), a
// raster data: URL, and, unless the operator drops them (SanitizeOptions.remoteImages), a
// remote http(s) or protocol-relative URL or a path relative to the page the document came
// from (README badges, a saved page's `/images/…`). The server never fetches those: a client
// shows them as the source did, PDF export prints offline. Anything else (other data: URLs,
// svg data, `javascript:` and other schemes, a relative path into our own API) drops the whole
// <img> (its alt text with it).
const OUR_MEDIA = /^\/v1\/media\/[0-9a-f]{64}$/;
const INLINE_IMAGE = /^data:image\/(?:png|jpeg|gif|webp)[;,]/;
const REMOTE_IMAGE = /^(?:https?:)?\/\/[^/\\]/i;
const HAS_SCHEME = /^[a-z][a-z0-9+.-]*:/i;
// Where a relative src is resolved to check its path (the host is never contacted).
const PATH_BASE = "https://redline.invalid/";
const DROPPED_IMAGE_HTML = '<wbr data-redline-dropped="img" />';

// Bidi embedding/override/isolate controls (U+202A–U+202E, U+2066–U+2069) reorder what the
// reader sees against what is stored ("Trojan Source"); LRM/RLM (U+200E/U+200F) only mark
// direction and stay, as right-to-left text needs them.
const BIDI_CONTROLS = /[\u202A-\u202E\u2066-\u2069]/g;

// allowedEmptyAttributes is a sanitize-html option its type definitions do not list yet.
const BASE_OPTIONS: sanitize.IOptions & { allowedEmptyAttributes: string[] } = {
  allowedTags: ALLOWED_TAGS,
  allowedAttributes: ALLOWED_ATTRIBUTES,
  // `hidden` is written `hidden=""` (screenHidden); sanitize-html drops other empty attributes.
  allowedEmptyAttributes: ["alt", "hidden"],
  nonTextTags: NON_TEXT_TAGS,
  selfClosing: SELF_CLOSING,
  allowedSchemes: ["http", "https", "mailto", "tel", "ftp"],
  allowedSchemesByTag: { img: ["data", "http", "https"] },
  allowedSchemesAppliedToAttributes: ["href", "src", "cite"],
  allowProtocolRelative: true,
  // Style attributes are screened declaration by declaration in transformTags: parsing them
  // through postcss rewrites the text (and is slow).
  parseStyleAttributes: false,
  disallowedTagsMode: "discard",
  transformTags: { "*": (tagName, attribs) => screenAttributes(tagName, attribs, "keep") },
  // Text arrives decoded (then escaped), so an entity-spelled control is caught too.
  textFilter: (text) => text.replace(BIDI_CONTROLS, ""),
};
const OPTIONS_BY_POLICY: Record<RemoteImages, typeof BASE_OPTIONS> = {
  keep: BASE_OPTIONS,
  drop: { ...BASE_OPTIONS, transformTags: { "*": (tagName, attribs) => screenAttributes(tagName, attribs, "drop") } },
};

/** What happens to `<img>` whose src is remote or relative: kept as written, or dropped (REMOTE_IMAGES=drop). */
export type RemoteImages = "keep" | "drop";

/** Options of sanitizeHtml. */
export interface SanitizeOptions {
  /** Remote and relative image sources (default "keep"); our media and raster data: URLs stay either way. */
  remoteImages?: RemoteImages;
}

/**
 * Sanitizes untrusted HTML for storage and display.
 * Drops scripts, frames/objects/embeds, forms, `on*` handlers, `javascript:`/
 * `vbscript:` URLs, and every `<img>` whose src is not our media
 * (`/v1/media/<64 hex>`), a `data:image/(png|jpeg|gif|webp)` URL, or (unless
 * `opts.remoteImages` is "drop") an http(s)/protocol-relative URL or a relative path
 * outside `/v1/` (kept with its alt; nothing here fetches it). Inline styles
 * lose declarations that fetch or run anything (`url(`, `image-set(`, `expression(`,
 * `@import`, ...), `position` other than static/relative, and `z-index`; the rest of
 * a style is kept verbatim. Links with a `target` get `rel="noopener noreferrer"`.
 * Bidi embedding/override/isolate controls are removed from text and attributes.
 * Keeps tables (with colspan/rowspan/width/align), classes, ids, every `data-*`
 * attribute (chunk ids and parts are policed by the chunker) and ordinary formatting.
 * Comments, doctype and the document <head> are removed, and so are NUL characters (HTML
 * parsers drop them, and Postgres text cannot store them). Linear in the input; never throws.
 */
export function sanitizeHtml(html: string, opts: SanitizeOptions = {}): string {
  const options = OPTIONS_BY_POLICY[opts.remoteImages ?? "keep"];
  return sanitize(html.replaceAll("\0", ""), options).replaceAll(DROPPED_IMAGE_HTML, "");
}

function screenAttributes(tagName: string, attribs: sanitize.Attributes, remote: RemoteImages): sanitize.Tag {
  for (const name of Object.keys(attribs)) {
    const value = attribs[name];
    if (BIDI_CONTROLS.test(value)) attribs[name] = value.replace(BIDI_CONTROLS, "");
    BIDI_CONTROLS.lastIndex = 0;
  }
  if (attribs.style !== undefined) {
    const style = screenStyle(attribs.style);
    if (style === "") delete attribs.style;
    else attribs.style = style;
  }
  // Turned into a marked void tag that sanitizeHtml cuts from the output in one pass:
  // sanitize-html's exclusiveFilter cuts the output string per removal (quadratic on large
  // documents), and renaming to a disallowed tag leaves a stale rename for a later sibling.
  if (tagName === "img" && !isAllowedImageSource(attribs.src ?? "", remote))
    return { tagName: "wbr", attribs: { "data-redline-dropped": "img" } };
  if (tagName === "a" && attribs.target !== undefined) attribs.rel = withNoOpener(attribs.rel);
  screenHidden(tagName, attribs);
  return { tagName, attribs };
}

/**
 * The style attribute without its risky declarations (see sanitizeHtml); unchanged, byte for
 * byte, when nothing is risky; "" when nothing is left.
 */
export function screenStyle(style: string): string {
  const declarations = splitDeclarations(style);
  const kept = declarations.filter((d) => !isRiskyDeclaration(d));
  if (kept.length === declarations.length) return style;
  return kept
    .map((d) => d.trim())
    .filter(Boolean)
    .join("; ");
}

function isRiskyDeclaration(declaration: string): boolean {
  const plain = decodeCss(declaration);
  if (DANGEROUS_DECLARATION.test(plain)) return true;
  const colon = plain.indexOf(":");
  if (colon < 0) return false;
  const property = plain.slice(0, colon).trim().toLowerCase();
  if (DROPPED_PROPERTIES.has(property)) return true;
  if (property !== "position") return false;
  const value = plain
    .slice(colon + 1)
    .replace(/!\s*important/i, "")
    .trim()
    .toLowerCase();
  return !KEPT_POSITIONS.has(value);
}

// Splits on `;` outside quotes and parentheses, in one pass: `url("a;b")` stays one declaration.
function splitDeclarations(style: string): string[] {
  const out: string[] = [];
  let start = 0;
  let depth = 0;
  let quote = "";
  for (let i = 0; i < style.length; i++) {
    const ch = style[i];
    if (ch === "\\") i++;
    else if (quote) {
      if (ch === quote) quote = "";
    } else if (ch === '"' || ch === "'") quote = ch;
    else if (ch === "(") depth++;
    else if (ch === ")") depth = Math.max(0, depth - 1);
    else if (ch === ";" && depth === 0) {
      out.push(style.slice(start, i));
      start = i + 1;
    }
  }
  out.push(style.slice(start));
  return out;
}

// What a CSS engine reads: comments removed, escapes (`\75 rl(`, `u\rl(`) decoded, so the
// checks above cannot be dodged by spelling.
function decodeCss(text: string): string {
  return text
    .replace(/\/\*[\s\S]*?(?:\*\/|$)/g, "")
    .replace(/\\([0-9a-fA-F]{1,6})[ \t\n\r\f]?|\\([\s\S])/g, (_, hex: string | undefined, ch: string | undefined) =>
      hex === undefined ? (ch ?? "") : safeCodePoint(Number.parseInt(hex, 16)),
    );
}

function safeCodePoint(code: number): string {
  return code > 0 && code <= 0x10ffff ? String.fromCodePoint(code) : "\uFFFD";
}

/**
 * Hidden text has one form: an inline `<span data-hidden="true" hidden>`, which exports leave out
 * of txt/markdown and write back to docx as hidden text. Either mark on a span gives both; on
 * any other element `data-hidden` is removed (and `hidden` is not allowed), so a whole block,
 * heading or table cannot be hidden this way.
 */
function screenHidden(tagName: string, attribs: sanitize.Attributes): void {
  if (attribs["data-hidden"] === undefined && attribs.hidden === undefined) return;
  if (tagName === "span") {
    attribs["data-hidden"] = "true";
    attribs.hidden = "";
  } else delete attribs["data-hidden"];
}

function isAllowedImageSource(src: string, remote: RemoteImages): boolean {
  // Same normalisation as sanitize-html's scheme check: browsers skip controls/spaces.
  // biome-ignore lint/suspicious/noControlCharactersInRegex: browsers ignore these in URLs, so must we.
  const url = src.replace(/[\x00-\x20]+/g, "");
  if (OUR_MEDIA.test(url) || INLINE_IMAGE.test(url.toLowerCase())) return true;
  if (remote === "drop" || url === "") return false;
  if (REMOTE_IMAGE.test(url)) return true;
  if (HAS_SCHEME.test(url) || url.startsWith("\\")) return false;
  // A relative path is the source page's; one that resolves into our API (`/v1/…`, however
  // spelled with dot segments or escapes) would make every reader's browser call it.
  try {
    return !/^\/v1(?:\/|$)/i.test(new URL(url, PATH_BASE).pathname);
  } catch {
    return false;
  }
}

// A page opened with target=_blank must not get a handle on our window (window.opener), nor
// learn the document's URL from the Referer.
function withNoOpener(rel: string | undefined): string {
  const tokens = (rel ?? "").split(/\s+/).filter(Boolean);
  const lower = new Set(tokens.map((t) => t.toLowerCase()));
  for (const needed of ["noopener", "noreferrer"]) if (!lower.has(needed)) tokens.push(needed);
  return tokens.join(" ");
}
