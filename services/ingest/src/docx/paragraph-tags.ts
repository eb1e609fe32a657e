// What Word shows on a body paragraph that mammoth leaves out: its list number (docx/numbering.ts)
// and its alignment and indentation (w:jc, w:ind, directly or from its paragraph style). Before
// mammoth reads the main part, each such paragraph gets a bookmark `_rl_p<k>` after its w:pPr,
// which mammoth writes as `<a id="_rl_p<k>">` inside the paragraph's HTML element: the HTML side
// (converters/docx-paragraphs.ts) finds each paragraph again by that id, whatever mammoth made of
// it (a list item, a heading, a cell's paragraph), and never by counting.
import { ListCounter, type ListParagraph, Numbering } from "./numbering.js";
import { elementEnd } from "./source-map.js";

/** What a tagged paragraph carries into the HTML. */
export interface ParagraphInfo {
  list?: ListParagraph;
  /** CSS text-align: "center" | "right" | "justify". */
  align?: string;
  /** Left indentation and first-line indentation (negative: hanging), in points. */
  indentPt?: { left: number; firstLine: number };
}

/** The bookmark name prefix of a tagged paragraph. */
export const PARAGRAPH_TAG = "_rl_p";
// Below the body-block bookmarks' ids (source-map.ts), inside a signed 32-bit integer.
const TAG_ID_BASE = 2_100_000_000;
const TWIPS_PER_POINT = 20;

const JC_CSS = new Map([
  ["center", "center"],
  ["right", "right"],
  ["end", "right"],
  ["both", "justify"],
  ["distribute", "justify"],
  ["left", "left"],
  ["start", "left"],
]);

const VAL = new Map<string, RegExp>();

function val(xml: string, element: string): string | undefined {
  let re = VAL.get(element);
  if (!re) {
    re = new RegExp(`<w:${element}\\b[^>]*?\\bw:val="([^"]*)"`);
    VAL.set(element, re);
  }
  return re.exec(xml)?.[1];
}

function twips(tag: string, name: string): number | undefined {
  const m = new RegExp(`\\bw:${name}="(-?\\d+)"`).exec(tag);
  return m ? Number(m[1]) : undefined;
}

/** Paragraph styles' alignment and indentation, through w:basedOn. */
class ParagraphStyles {
  private readonly styles = new Map<string, { basedOn?: string; jc?: string; ind?: string }>();
  private readonly defaultStyle: string | undefined;

  constructor(stylesXml: string) {
    for (const s of stylesXml.match(/<w:style\b[^>]*w:type="paragraph"[^>]*>[\s\S]*?<\/w:style>/g) ?? []) {
      const id = /w:styleId="([^"]*)"/.exec(s)?.[1];
      if (!id) continue;
      const pPr = /<w:pPr>([\s\S]*?)<\/w:pPr>/.exec(s)?.[1] ?? "";
      this.styles.set(id, { basedOn: val(s, "basedOn"), jc: val(pPr, "jc"), ind: /<w:ind\b[^>]*>/.exec(pPr)?.[0] });
    }
    this.defaultStyle = /<w:style\b[^>]*w:type="paragraph"[^>]*w:default="1"[^>]*w:styleId="([^"]*)"/.exec(
      stylesXml,
    )?.[1];
  }

  /** The first of `key` found on the style or the styles it is based on. */
  lookup(styleId: string | undefined, key: "jc" | "ind"): string | undefined {
    let id = styleId ?? this.defaultStyle;
    for (let depth = 0; id !== undefined && depth < 20; depth++) {
      const style = this.styles.get(id);
      if (!style) return undefined;
      if (style[key] !== undefined) return style[key];
      id = style.basedOn;
    }
    return undefined;
  }
}

/** The document with every paragraph worth telling the HTML about tagged, and what each tag carries. */
export interface TaggedParagraphs {
  xml: string;
  info: Map<number, ParagraphInfo>;
}

/**
 * Tags the paragraphs of a main part `xml` (see the file comment) and numbers its list
 * paragraphs in document order. Paragraphs of a text box's VML fallback (mammoth reads the
 * DrawingML copy) and paragraphs whose mark is a tracked deletion (merged into the next one once
 * changes are accepted) are neither counted nor tagged. Returns `xml` itself when nothing is tagged.
 */
export function tagParagraphs(xml: string, numberingXml: string | undefined, stylesXml = ""): TaggedParagraphs {
  const counter = numberingXml ? new ListCounter(new Numbering(numberingXml, stylesXml)) : null;
  const styles = new ParagraphStyles(stylesXml);
  const info = new Map<number, ParagraphInfo>();
  const out: string[] = [];
  let last = 0;
  let k = 0;
  const token = /<(\/?)(mc:Fallback|w:p)(?=[\s>/])[^>]*?(\/?)>/g;
  let fallback = 0;
  for (let m = token.exec(xml); m; m = token.exec(xml)) {
    if (m[2] === "mc:Fallback") {
      if (m[3] !== "/") fallback += m[1] === "/" ? -1 : 1;
      continue;
    }
    if (m[1] === "/" || m[3] === "/" || fallback > 0) continue;
    let at = m.index + m[0].length;
    let pPr = "";
    if (xml.startsWith("<w:pPr", at) && /^<w:pPr[\s>/]/.test(xml.slice(at, at + 8))) {
      const end = elementEnd(xml, at);
      pPr = xml.slice(at, end);
      at = end;
    }
    if (/<w:rPr>(?:(?!<\/w:rPr>)[\s\S])*<w:del\b/.test(pPr.replace(/<w:pPrChange\b[\s\S]*?<\/w:pPrChange>/g, "")))
      continue;
    const own = pPr.replace(/<w:pPrChange\b[\s\S]*?<\/w:pPrChange>|<w:rPr>[\s\S]*?<\/w:rPr>/g, "");
    const here = paragraphInfo(own, counter, styles);
    const index = k++;
    if (!here) continue;
    info.set(index, here);
    const id = TAG_ID_BASE + index;
    out.push(
      xml.slice(last, at),
      `<w:bookmarkStart w:id="${id}" w:name="${PARAGRAPH_TAG}${index}"/><w:bookmarkEnd w:id="${id}"/>`,
    );
    last = at;
  }
  if (info.size === 0) return { xml, info };
  out.push(xml.slice(last));
  return { xml: out.join(""), info };
}

function paragraphInfo(pPr: string, counter: ListCounter | null, styles: ParagraphStyles): ParagraphInfo | null {
  const out: ParagraphInfo = {};
  const list = counter?.next(pPr);
  if (list) out.list = list;
  const style = val(pPr, "pStyle");
  const align = JC_CSS.get(val(pPr, "jc") ?? styles.lookup(style, "jc") ?? "");
  if (align && align !== "left") out.align = align;
  // List items are indented by their list; only other paragraphs carry their own indentation.
  if (!list) {
    const ind = /<w:ind\b[^>]*>/.exec(pPr)?.[0] ?? styles.lookup(style, "ind");
    if (ind) {
      const left = twips(ind, "left") ?? twips(ind, "start") ?? 0;
      const firstLine = twips(ind, "firstLine") ?? -(twips(ind, "hanging") ?? 0);
      if (left > 0 || firstLine !== 0)
        out.indentPt = { left: left / TWIPS_PER_POINT, firstLine: firstLine / TWIPS_PER_POINT };
    }
  }
  return out.list || out.align || out.indentPt ? out : null;
}
