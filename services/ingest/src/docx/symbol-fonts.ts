// Characters of Word's symbol fonts (Symbol, Wingdings): the text of a run in such a font is
// glyph codes, not Unicode: Word stores them as U+F020–U+F0FF (or, in older files, as the byte
// itself), which a browser shows as private-use boxes. They are mapped to the Unicode character
// the glyph means by a small table of the common glyphs (the Adobe Symbol encoding's Greek and
// mathematical signs; Wingdings' bullets, boxes, check marks and arrows); an unmapped glyph is
// left out and counted, for a warning. `w:sym` elements are mapped by mammoth itself.
import { decodeXml, escapeXml } from "./xml.js";

const SYMBOL_UPPER = "ΑΒΧΔΕΦΓΗΙϑΚΛΜΝΟΠΘΡΣΤΥςΩΞΨΖ";
const SYMBOL_LOWER = "αβχδεφγηιϕκλμνοπθρστυϖωξψζ";

function symbolTable(): Map<number, string> {
  const table = new Map<number, string>();
  // 0x20–0x40: ASCII punctuation and digits, but for a few mathematical signs.
  for (let c = 0x20; c <= 0x40; c++) table.set(c, String.fromCharCode(c));
  const signs: [number, number][] = [
    [0x22, 0x2200],
    [0x24, 0x2203],
    [0x27, 0x220d],
    [0x2a, 0x2217],
    [0x2d, 0x2212],
    [0x40, 0x2245],
    [0x5b, 0x5b],
    [0x5c, 0x2234],
    [0x5d, 0x5d],
    [0x5e, 0x22a5],
    [0x5f, 0x5f],
    [0x7b, 0x7b],
    [0x7c, 0x7c],
    [0x7d, 0x7d],
    [0x7e, 0x223c],
    [0xa2, 0x2032],
    [0xa3, 0x2264],
    [0xa4, 0x2044],
    [0xa5, 0x221e],
    [0xa7, 0x2663],
    [0xa8, 0x2666],
    [0xa9, 0x2665],
    [0xaa, 0x2660],
    [0xab, 0x2194],
    [0xac, 0x2190],
    [0xad, 0x2191],
    [0xae, 0x2192],
    [0xaf, 0x2193],
    [0xb0, 0xb0],
    [0xb1, 0xb1],
    [0xb2, 0x2033],
    [0xb3, 0x2265],
    [0xb4, 0xd7],
    [0xb5, 0x221d],
    [0xb6, 0x2202],
    [0xb7, 0x2022],
    [0xb8, 0xf7],
    [0xb9, 0x2260],
    [0xba, 0x2261],
    [0xbb, 0x2248],
    [0xbc, 0x2026],
    [0xc5, 0x2295],
    [0xc6, 0x2205],
    [0xc7, 0x2229],
    [0xc8, 0x222a],
    [0xc9, 0x2283],
    [0xca, 0x2287],
    [0xcb, 0x2284],
    [0xcc, 0x2282],
    [0xcd, 0x2286],
    [0xce, 0x2208],
    [0xcf, 0x2209],
    [0xd0, 0x2220],
    [0xd1, 0x2207],
    [0xd5, 0x220f],
    [0xd6, 0x221a],
    [0xd7, 0x22c5],
    [0xd8, 0xac],
    [0xd9, 0x2227],
    [0xda, 0x2228],
    [0xdb, 0x21d4],
    [0xdc, 0x21d0],
    [0xdd, 0x21d1],
    [0xde, 0x21d2],
    [0xdf, 0x21d3],
    [0xe0, 0x25ca],
    [0xe5, 0x2211],
    [0xf2, 0x222b],
  ];
  for (const [code, unicode] of signs) table.set(code, String.fromCodePoint(unicode));
  for (let k = 0; k < 26; k++) {
    table.set(0x41 + k, SYMBOL_UPPER[k]);
    table.set(0x61 + k, SYMBOL_LOWER[k]);
  }
  return table;
}

const WINGDINGS = new Map<number, string>(
  (
    [
      [0x20, 0x20],
      [0x4a, 0x263a],
      [0x4c, 0x2639],
      [0x6c, 0x25cf],
      [0x6e, 0x25a0],
      [0x6f, 0x25a1],
      [0x71, 0x2751],
      [0x75, 0x25c6],
      [0x76, 0x2756],
      [0x9f, 0x2022],
      [0xa7, 0x25aa],
      [0xa8, 0x25fb],
      [0xd8, 0x27a2],
      [0xe0, 0x2192],
      [0xe8, 0x2794],
      [0xf0, 0x21e8],
      [0xfb, 0x2717],
      [0xfc, 0x2713],
      [0xfd, 0x2612],
      [0xfe, 0x2611],
    ] as const
  ).map(([code, unicode]) => [code, String.fromCodePoint(unicode)]),
);

const TABLES = new Map<string, Map<number, string>>([
  ["symbol", symbolTable()],
  ["wingdings", WINGDINGS],
]);

/** The symbol font a run's properties (a w:rPr's content) set, lower-cased ("symbol", "wingdings"), or null. */
export function symbolFontOf(rPr: string): string | null {
  const fonts = /<w:rFonts\b[^>]*>/.exec(rPr)?.[0];
  if (!fonts) return null;
  const name = /\bw:(?:ascii|hAnsi)="([^"]*)"/.exec(fonts)?.[1]?.toLowerCase();
  return name && TABLES.has(name) ? name : null;
}

/**
 * `text` of a run in symbol font `font` as Unicode: each glyph code (U+F020–U+F0FF, or a byte
 * U+0020–U+00FF) mapped, an unmapped one left out and counted in `dropped`.
 */
export function symbolText(text: string, font: string, dropped: { count: number }): string {
  const table = TABLES.get(font);
  if (!table) return text;
  let out = "";
  for (const ch of text) {
    const cp = ch.codePointAt(0) ?? 0;
    const code = cp >= 0xf020 && cp <= 0xf0ff ? cp - 0xf000 : cp <= 0xff ? cp : -1;
    if (code < 0) {
      out += ch;
      continue;
    }
    const mapped = table.get(code);
    if (mapped === undefined) dropped.count++;
    else out += mapped;
  }
  return out;
}

/**
 * A part's XML with the text of every run in a symbol font mapped to Unicode (symbolText), for
 * reading only; `dropped` counts the glyphs left out. Returns `xml` itself when no run uses one.
 */
export function mapSymbolRuns(xml: string, dropped: { count: number }): string {
  if (!/<w:rFonts\b[^>]*"(?:Symbol|Wingdings)"/i.test(xml)) return xml;
  return xml.replace(/<w:r\b[^>]*>\s*<w:rPr>([\s\S]*?)<\/w:rPr>[\s\S]*?<\/w:r>/g, (run, rPr: string) => {
    const font = symbolFontOf(rPr);
    if (!font) return run;
    return run.replace(
      /(<w:t\b[^>]*>)([^<]*)(<\/w:t>)/g,
      (_, open: string, text: string, close: string) =>
        `${open}${escapeXml(symbolText(decodeXml(text), font, dropped))}${close}`,
    );
  });
}
