// Small WordprocessingML helpers for writing a package back in place: top-level children of an
// element, a paragraph's text and the things anchored in it (bookmarks, comment ranges, notes,
// drawings, equations), and runs written from formatted text with those anchors put back.
import { elementEnd } from "./source-map.js";

/** One element: `[start, end)` offsets in its string, its local name. */
export interface XmlElement {
  start: number;
  end: number;
  name: string;
}

const TAG = /<!--[\s\S]*?-->|<\?[\s\S]*?\?>|<!\[CDATA\[[\s\S]*?\]\]>|<(\/?)([\w.-]+:)?([\w.-]+)\b[^>]*?(\/?)>/g;

/** The child elements of the element that opens at `start` of `xml` (empty for a self-closing one). */
export function childElements(xml: string, start = 0): XmlElement[] {
  const open = /^<[^>]*?(\/?)>/.exec(xml.slice(start, start + 4096));
  if (!open || open[1] === "/") return [];
  const out: XmlElement[] = [];
  TAG.lastIndex = start + open[0].length;
  for (let m = TAG.exec(xml); m; m = TAG.exec(xml)) {
    if (m[3] === undefined) continue;
    if (m[1] === "/") return out;
    const end = m[4] === "/" ? TAG.lastIndex : elementEnd(xml, m.index);
    out.push({ start: m.index, end, name: m[3] });
    TAG.lastIndex = end;
  }
  return out;
}

/** Decodes XML character references and the five named entities. */
export function decodeXml(text: string): string {
  return text
    .replace(/&lt;/g, "<")
    .replace(/&gt;/g, ">")
    .replace(/&quot;/g, '"')
    .replace(/&apos;/g, "'")
    .replace(/&#x([0-9a-f]+);/gi, (_, h: string) => String.fromCodePoint(Number.parseInt(h, 16)))
    .replace(/&#(\d+);/g, (_, d: string) => String.fromCodePoint(Number(d)))
    .replace(/&amp;/g, "&");
}

/** Escapes text for an XML text node or attribute. */
export function escapeXml(text: string): string {
  return text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");
}

/** Something in a paragraph that is not its text, kept at its offset in the text. */
export interface Anchor {
  offset: number;
  xml: string;
}

/** What an original paragraph is made of, as far as rewriting it needs. */
export interface ParagraphPieces {
  /** The w:pPr element, or "". */
  pPr: string;
  /** Visible text: w:t, tabs as "\t", breaks as "\n" (deleted text left out). */
  text: string;
  /** The w:rPr of the first run with text, or "". */
  firstRunProps: string;
  /** Bookmarks, comment ranges and references, equations, fields' markers: kept at their offsets. */
  anchors: Anchor[];
  /** Runs holding a drawing, picture or embedded object, in order, at their offsets (an `<img>` takes the next one). */
  drawings: Anchor[];
  /** Note reference runs by "footnote:<id>" / "endnote:<id>". */
  notes: Map<string, string>;
  /** Hyperlink relationship ids in order (an `<a href>` may reuse one). */
  links: string[];
}

/** The visible text of runs in `xml`: w:t, tabs as "\t", breaks as "\n". */
export function runText(run: string): string {
  let text = "";
  for (const piece of run.match(/<w:t\b[^>]*\/>|<w:t\b[^>]*>[\s\S]*?<\/w:t>|<w:(?:tab|ptab|br|cr)\b[^>]*\/>/g) ?? []) {
    if (piece.startsWith("<w:t")) text += piece.endsWith("/>") ? "" : decodeXml(piece.replace(/<[^>]+>/g, ""));
    else if (piece.startsWith("<w:br") || piece.startsWith("<w:cr")) text += "\n";
    else text += "\t";
  }
  return text;
}

/** Splits an original w:p into its properties, text and anchors (see ParagraphPieces). */
export function paragraphPieces(p: string): ParagraphPieces {
  const out: ParagraphPieces = {
    pPr: "",
    text: "",
    firstRunProps: "",
    anchors: [],
    drawings: [],
    notes: new Map(),
    links: [],
  };
  const walk = (xml: string, start: number, inLink: boolean) => {
    for (const child of childElements(xml, start)) {
      const el = xml.slice(child.start, child.end);
      switch (child.name) {
        case "pPr":
          if (start === 0) out.pPr = el;
          break;
        case "r": {
          const note = /<w:(footnote|endnote)Reference\b[^>]*w:id="([^"]*)"/.exec(el);
          if (note) out.notes.set(`${note[1]}:${note[2]}`, el);
          else if (/<w:(?:drawing|pict|object)\b/.test(el)) out.drawings.push({ offset: out.text.length, xml: el });
          // A note's own number mark (footnoteRef) and separators are kept in place like anchors.
          else if (
            /<w:(?:commentReference|fldChar|instrText|footnoteRef|endnoteRef|separator|continuationSeparator)\b/.test(
              el,
            )
          )
            out.anchors.push({ offset: out.text.length, xml: el });
          else {
            const text = runText(el);
            if (text && !out.firstRunProps && !inLink) {
              const rPr = childElements(el).find((c) => c.name === "rPr");
              out.firstRunProps = rPr ? el.slice(rPr.start, rPr.end) : "";
            }
            out.text += text;
          }
          break;
        }
        case "hyperlink": {
          const rid = /\sr:id="([^"]*)"/.exec(el.slice(0, el.indexOf(">")))?.[1];
          if (rid) out.links.push(rid);
          walk(xml, child.start, true);
          break;
        }
        case "ins":
        case "smartTag":
        case "fldSimple":
        case "customXml":
        case "moveTo":
          walk(xml, child.start, inLink);
          break;
        case "sdt": {
          const content = childElements(xml, child.start).find((c) => c.name === "sdtContent");
          if (content) walk(xml, content.start, inLink);
          break;
        }
        case "del":
        case "moveFrom":
        case "proofErr":
          break;
        default:
          // bookmarks, comment ranges, permissions, equations (m:oMath): not text, kept in place.
          out.anchors.push({ offset: out.text.length, xml: el });
      }
    }
  };
  walk(p, 0, false);
  return out;
}

// Canonical order of w:rPr children (ECMA-376 CT_RPr); Word refuses some out-of-order runs.
const RPR_ORDER = [
  "rStyle",
  "rFonts",
  "b",
  "bCs",
  "i",
  "iCs",
  "caps",
  "smallCaps",
  "strike",
  "dstrike",
  "outline",
  "shadow",
  "emboss",
  "imprint",
  "noProof",
  "snapToGrid",
  "vanish",
  "webHidden",
  "color",
  "spacing",
  "w",
  "kern",
  "position",
  "sz",
  "szCs",
  "highlight",
  "u",
  "effect",
  "bdr",
  "shd",
  "fitText",
  "vertAlign",
  "rtl",
  "cs",
  "em",
  "lang",
  "eastAsianLayout",
  "specVanish",
  "oMath",
];
// What the HTML says about a run: these come from it, not from the original run.
const FROM_HTML = new Set(["b", "bCs", "i", "iCs", "u", "strike", "dstrike", "vertAlign", "rStyle"]);

/** Inline formatting of a piece of text, as HTML gives it. */
export interface RunFormat {
  b?: boolean;
  i?: boolean;
  u?: boolean;
  s?: boolean;
  sup?: boolean;
  sub?: boolean;
  code?: boolean;
  href?: string;
}

/** The inner children of a w:rPr (`base`, may be "") minus what HTML decides, plus `fmt`, in schema order. */
export function runProps(base: string, fmt: RunFormat): string {
  const kept: { name: string; xml: string }[] = [];
  if (base) {
    for (const c of childElements(base)) {
      if (!FROM_HTML.has(c.name) && c.name !== "rPrChange")
        kept.push({ name: c.name, xml: base.slice(c.start, c.end) });
    }
  }
  if (fmt.href) kept.push({ name: "rStyle", xml: '<w:rStyle w:val="Hyperlink"/>' });
  if (fmt.b) kept.push({ name: "b", xml: "<w:b/>" });
  if (fmt.i) kept.push({ name: "i", xml: "<w:i/>" });
  if (fmt.s) kept.push({ name: "strike", xml: "<w:strike/>" });
  if (fmt.u) kept.push({ name: "u", xml: '<w:u w:val="single"/>' });
  if (fmt.sup || fmt.sub)
    kept.push({ name: "vertAlign", xml: `<w:vertAlign w:val="${fmt.sup ? "superscript" : "subscript"}"/>` });
  if (fmt.code && !kept.some((k) => k.name === "rFonts"))
    kept.push({ name: "rFonts", xml: '<w:rFonts w:ascii="Courier New" w:hAnsi="Courier New" w:cs="Courier New"/>' });
  const rank = (name: string) => {
    const i = RPR_ORDER.indexOf(name);
    return i < 0 ? RPR_ORDER.length : i;
  };
  kept.sort((a, b) => rank(a.name) - rank(b.name));
  return kept.length > 0 ? `<w:rPr>${kept.map((k) => k.xml).join("")}</w:rPr>` : "";
}

/** One piece of a paragraph's new content. */
export type Segment = { kind: "text"; text: string; fmt: RunFormat } | { kind: "raw"; xml: string };

/** The text runs of `text` ("\t" → w:tab, "\n" → w:br) with run properties `rPr`. */
export function textRun(text: string, rPr: string): string {
  const parts = text.split(/(\t|\n)/).filter((t) => t !== "");
  const body = parts
    .map((t) => (t === "\t" ? "<w:tab/>" : t === "\n" ? "<w:br/>" : `<w:t xml:space="preserve">${escapeXml(t)}</w:t>`))
    .join("");
  return `<w:r>${rPr}${body}</w:r>`;
}

/**
 * The runs of `segments`, with `anchors` (offsets in the segments' text) inserted where they
 * fall; text is split at anchors. `link(href)` gives a relationship id for a hyperlink.
 */
export function writeRuns(
  segments: Segment[],
  anchors: Anchor[],
  baseRunProps: string,
  link: (href: string) => string | null,
): string {
  const sorted = [...anchors].sort((a, b) => a.offset - b.offset);
  let next = 0;
  let offset = 0;
  const out: string[] = [];
  const flush = (upTo: number) => {
    while (next < sorted.length && sorted[next].offset <= upTo) out.push(sorted[next++].xml);
  };
  for (const seg of segments) {
    if (seg.kind === "raw") {
      flush(offset);
      out.push(seg.xml);
      continue;
    }
    const rPr = runProps(baseRunProps, seg.fmt);
    const text: string[] = [];
    const between: string[] = [];
    let from = 0;
    const emit = (to: number) => {
      if (to > from) text.push(textRun(seg.text.slice(from, to), rPr));
      from = to;
    };
    flush(offset);
    while (next < sorted.length && sorted[next].offset < offset + seg.text.length) {
      emit(sorted[next].offset - offset);
      between.push(sorted[next].xml);
      text.push(sorted[next++].xml);
    }
    emit(seg.text.length);
    offset += seg.text.length;
    const rid = seg.fmt.href ? link(seg.fmt.href) : null;
    // Anchors inside a link's text are put before the link, not inside it.
    if (rid) {
      const inner = text.filter((r) => !between.includes(r));
      out.push(...between, `<w:hyperlink r:id="${rid}">${inner.join("")}</w:hyperlink>`);
    } else out.push(...text);
  }
  flush(Number.POSITIVE_INFINITY);
  return out.join("");
}

/** Rewrites `w:` prefixes for a part whose WordprocessingML prefix is another one. */
export function withPrefix(xml: string, prefix: string): string {
  if (prefix === "w:") return xml;
  return xml.replace(/(<\/?|\s)w:/g, `$1${prefix}`);
}
