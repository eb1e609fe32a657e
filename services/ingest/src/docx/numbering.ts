// Word list numbering as Word computes it (ECMA-376 Part 1, 17.9): a w:num points at a
// w:abstractNum (or, through w:numStyleLink, at the abstractNum of a numbering style), may
// override a level (w:lvlOverride with a whole w:lvl or only a w:startOverride), and a paragraph
// takes its numbering from its own w:numPr, from its paragraph style's (through w:basedOn), or
// from an abstract level tied to its style (w:lvl/w:pStyle). Nums of one abstractNum share their
// counters (that is how Word continues a list after an interruption by other lists), a num's
// w:startOverride restarts a level the first time the num uses it, and a level restarts under a
// shallower one. Read by the converter (list starts, formats, labels) and nothing else writes it.

/** One level of a list: where it starts, how it counts and how its label is written. */
export interface LevelDef {
  start: number;
  /** w:numFmt: "decimal", "bullet", "lowerLetter", "upperRoman", "decimalZero", "none", ... */
  format: string;
  /** w:lvlText, e.g. "%1." or "%1.%2.%3" or "(%1)". */
  text: string;
  /** w:isLgl: every number of the label in decimal. */
  legal: boolean;
}

/** What Word shows on one list paragraph. */
export interface ListParagraph {
  numId: string;
  ilvl: number;
  /** The number Word shows (also counted for bullets, where it is not shown). */
  value: number;
  format: string;
  /** The level's w:lvlText. */
  lvlText: string;
  /** The label Word writes before the paragraph ("17.", "1.2.3", "(c)"; the bullet's glyph for bullets). */
  label: string;
  /** The counter shared by the nums of one list (its abstractNum). */
  list: string;
}

interface NumDef {
  abstract: string;
  starts: Map<number, number>;
  levels: Map<number, LevelDef>;
}

interface StyleDef {
  basedOn?: string;
  numId?: string;
  ilvl?: number;
}

const MAX_STYLE_DEPTH = 20;

const VAL = new Map<string, RegExp>();

function val(xml: string, element: string): string | undefined {
  let re = VAL.get(element);
  if (!re) {
    re = new RegExp(`<w:${element}\\b[^>]*?\\bw:val="([^"]*)"`);
    VAL.set(element, re);
  }
  return re.exec(xml)?.[1];
}

function readLevel(lvl: string): LevelDef {
  // A level's own w:pPr/w:rPr may hold elements of the same names; only the level's are read.
  const head = lvl.replace(/<w:(pPr|rPr)\b[\s\S]*?<\/w:\1>/g, "");
  const legal = /<w:isLgl\b(?![^>]*w:val="(?:false|0|off)")/.test(head);
  return {
    start: Number(val(head, "start") ?? 1),
    format: val(head, "numFmt") ?? "decimal",
    text: val(head, "lvlText") ?? "",
    legal,
  };
}

function levelsOf(xml: string): Map<number, LevelDef> {
  const levels = new Map<number, LevelDef>();
  for (const lvl of xml.match(/<w:lvl\b[^>]*>[\s\S]*?<\/w:lvl>/g) ?? []) {
    levels.set(Number(/w:ilvl="(\d+)"/.exec(lvl)?.[1] ?? 0), readLevel(lvl));
  }
  return levels;
}

/** The numbering definitions of a package: numbering.xml, with the styles that carry numbering. */
export class Numbering {
  private readonly abstracts = new Map<string, { levels: Map<number, LevelDef>; numStyleLink?: string }>();
  private readonly nums = new Map<string, NumDef>();
  private readonly styles = new Map<string, StyleDef>();
  /** Paragraph style → the abstract level tied to it (w:lvl/w:pStyle). */
  private readonly levelStyles = new Map<string, { abstract: string; ilvl: number }>();

  constructor(numberingXml: string, stylesXml = "") {
    for (const a of numberingXml.match(/<w:abstractNum\b[\s\S]*?<\/w:abstractNum>/g) ?? []) {
      const id = /w:abstractNumId="(\d+)"/.exec(a)?.[1];
      if (!id) continue;
      const levels = levelsOf(a);
      this.abstracts.set(id, { levels, numStyleLink: val(a, "numStyleLink") });
      for (const lvl of a.match(/<w:lvl\b[^>]*>[\s\S]*?<\/w:lvl>/g) ?? []) {
        const style = val(lvl, "pStyle");
        if (style && !this.levelStyles.has(style))
          this.levelStyles.set(style, { abstract: id, ilvl: Number(/w:ilvl="(\d+)"/.exec(lvl)?.[1] ?? 0) });
      }
    }
    for (const n of numberingXml.match(/<w:num\b[^>]*>[\s\S]*?<\/w:num>/g) ?? []) {
      const id = /w:numId="(\d+)"/.exec(n)?.[1];
      const abstract = val(n, "abstractNumId");
      if (!id || !abstract) continue;
      const starts = new Map<number, number>();
      const levels = new Map<number, LevelDef>();
      for (const o of n.match(/<w:lvlOverride\b[\s\S]*?<\/w:lvlOverride>/g) ?? []) {
        const ilvl = Number(/w:ilvl="(\d+)"/.exec(o)?.[1] ?? 0);
        const start = /<w:startOverride\b[^>]*w:val="(\d+)"/.exec(o)?.[1];
        const lvl = /<w:lvl\b[^>]*>[\s\S]*?<\/w:lvl>/.exec(o)?.[0];
        if (lvl) levels.set(ilvl, readLevel(lvl));
        // A level replaced whole starts again at its own w:start, as a startOverride would.
        if (start !== undefined) starts.set(ilvl, Number(start));
        else if (lvl) starts.set(ilvl, readLevel(lvl).start);
      }
      this.nums.set(id, { abstract, starts, levels });
    }
    for (const s of stylesXml.match(/<w:style\b[\s\S]*?<\/w:style>/g) ?? []) {
      const id = /w:styleId="([^"]*)"/.exec(s)?.[1];
      if (!id) continue;
      const numPr = /<w:numPr>([\s\S]*?)<\/w:numPr>/.exec(s)?.[1] ?? "";
      const ilvl = val(numPr, "ilvl");
      this.styles.set(id, {
        basedOn: val(s, "basedOn"),
        numId: val(numPr, "numId"),
        ilvl: ilvl === undefined ? undefined : Number(ilvl),
      });
    }
  }

  /** The abstractNum a num counts in, following w:numStyleLink to the numbering style's own list. */
  private abstractOf(numId: string): string | undefined {
    let abstract = this.nums.get(numId)?.abstract;
    for (let hops = 0; abstract !== undefined && hops < MAX_STYLE_DEPTH; hops++) {
      const link = this.abstracts.get(abstract)?.numStyleLink;
      if (!link) return abstract;
      const linkedNum = this.styleNumbering(link).numId;
      const next = linkedNum ? this.nums.get(linkedNum)?.abstract : undefined;
      if (!next || next === abstract) return abstract;
      abstract = next;
    }
    return abstract;
  }

  /** The numId and ilvl a style gives (through w:basedOn), each possibly absent. */
  private styleNumbering(styleId: string): { numId?: string; ilvl?: number } {
    const out: { numId?: string; ilvl?: number } = {};
    let id: string | undefined = styleId;
    for (let depth = 0; id !== undefined && depth < MAX_STYLE_DEPTH; depth++) {
      const style = this.styles.get(id);
      if (!style) break;
      out.numId ??= style.numId;
      out.ilvl ??= style.ilvl;
      id = style.basedOn;
    }
    return out;
  }

  /** The level a num shows at `ilvl` (a w:lvlOverride's own w:lvl first), or undefined. */
  level(numId: string, ilvl: number): LevelDef | undefined {
    const num = this.nums.get(numId);
    const own = num?.levels.get(ilvl);
    if (own) return own;
    const abstract = this.abstractOf(numId);
    return abstract === undefined ? undefined : this.abstracts.get(abstract)?.levels.get(ilvl);
  }

  /** The numId and ilvl of a paragraph with properties `pPr` (its w:pPr, or ""), or null when it is not numbered. */
  paragraphNumbering(pPr: string): { numId: string; ilvl: number } | null {
    const numPr = /<w:numPr>([\s\S]*?)<\/w:numPr>/.exec(pPr)?.[1];
    const style = val(pPr.replace(/<w:numPr>[\s\S]*?<\/w:numPr>/, ""), "pStyle");
    const fromStyle = style ? this.styleNumbering(style) : {};
    const numId = (numPr ? val(numPr, "numId") : undefined) ?? fromStyle.numId;
    const ilvlText = numPr ? val(numPr, "ilvl") : undefined;
    if (numId === "0") return null;
    if (numId !== undefined) {
      if (!this.nums.has(numId)) return null;
      return { numId, ilvl: ilvlText !== undefined ? Number(ilvlText) : (fromStyle.ilvl ?? 0) };
    }
    const tied = style ? this.levelStyles.get(style) : undefined;
    if (!tied) return null;
    const num = [...this.nums.entries()].find(([, n]) => n.abstract === tied.abstract)?.[0];
    return num ? { numId: num, ilvl: tied.ilvl } : null;
  }

  /** The list a num counts in: nums of one abstractNum share it. */
  listOf(numId: string): string {
    return this.abstractOf(numId) ?? `num:${numId}`;
  }

  /** The w:startOverride of a num's level, or undefined. */
  startOverride(numId: string, ilvl: number): number | undefined {
    return this.nums.get(numId)?.starts.get(ilvl);
  }
}

/**
 * Numbers paragraphs in document order as Word does: call `next` with each body paragraph's
 * w:pPr (paragraphs of a text box's VML fallback and deleted paragraphs left out by the caller).
 */
export class ListCounter {
  private readonly counters = new Map<string, Map<number, number>>();
  private readonly overridden = new Set<string>();

  constructor(private readonly numbering: Numbering) {}

  /** What Word shows on a paragraph with properties `pPr`, or null when it is not numbered. */
  next(pPr: string): ListParagraph | null {
    const at = this.numbering.paragraphNumbering(pPr);
    if (!at) return null;
    const { numId, ilvl } = at;
    const level = this.numbering.level(numId, ilvl);
    const list = this.numbering.listOf(numId);
    const perList = this.counters.get(list) ?? new Map<number, number>();
    this.counters.set(list, perList);
    for (const deeper of [...perList.keys()]) if (deeper > ilvl) perList.delete(deeper);
    const override = this.numbering.startOverride(numId, ilvl);
    const restart = override !== undefined && !this.overridden.has(`${numId}:${ilvl}`);
    if (restart) this.overridden.add(`${numId}:${ilvl}`);
    const previous = perList.get(ilvl);
    const value = restart ? override : previous === undefined ? (level?.start ?? 1) : previous + 1;
    perList.set(ilvl, value);
    const format = level?.format ?? "decimal";
    const lvlText = level?.text ?? `%${ilvl + 1}.`;
    // Each %N of the label is level N-1's current number in that level's format (a skipped
    // level shows its start, as Word does).
    const label = lvlText.replace(/%([1-9])/g, (_, n: string) => {
      const k = Number(n) - 1;
      const def = this.numbering.level(numId, k);
      const count = k === ilvl ? value : (perList.get(k) ?? def?.start ?? 1);
      return formatNumber(count, level?.legal && k !== ilvl ? "decimal" : (def?.format ?? "decimal"));
    });
    return { numId, ilvl, value, format, lvlText, label, list };
  }
}

const ROMAN: [number, string][] = [
  [1000, "m"],
  [900, "cm"],
  [500, "d"],
  [400, "cd"],
  [100, "c"],
  [90, "xc"],
  [50, "l"],
  [40, "xl"],
  [10, "x"],
  [9, "ix"],
  [5, "v"],
  [4, "iv"],
  [1, "i"],
];

function roman(n: number): string {
  let out = "";
  let rest = n;
  for (const [v, s] of ROMAN) {
    while (rest >= v) {
      out += s;
      rest -= v;
    }
  }
  return out;
}

/** `n` written in w:numFmt `format` (formats without a rule here are written in decimal). */
export function formatNumber(n: number, format: string): string {
  switch (format) {
    case "lowerLetter":
    case "upperLetter": {
      // Word repeats the letter past z: aa, bb, ...
      if (n < 1) return String(n);
      const letter = String.fromCharCode(97 + ((n - 1) % 26)).repeat(Math.floor((n - 1) / 26) + 1);
      return format === "upperLetter" ? letter.toUpperCase() : letter;
    }
    case "lowerRoman":
      return n < 1 ? String(n) : roman(n);
    case "upperRoman":
      return n < 1 ? String(n) : roman(n).toUpperCase();
    case "decimalZero":
      return n >= 0 && n < 10 ? `0${n}` : String(n);
    case "none":
      return "";
    default:
      return String(n);
  }
}
