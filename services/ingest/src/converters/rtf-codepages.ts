// Which code page an RTF's `\'hh` bytes are in: the current font's `\fcharsetN` (or `\cpgN`)
// from the font table, else the document's `\ansicpgN` (Windows-1252 when absent). Word writes
// Japanese, Chinese, Korean, Cyrillic, Greek, ... text this way, one `\'hh` per byte (a double-byte
// character is two escapes), usually next to a `\uN` that readers prefer.
import { charsetSupported } from "../text/encoding.js";

// \fcharsetN → the Windows code page it stands for (RTF 1.9.1 spec, "Font table").
const CHARSET_CODEPAGES = new Map<number, number>([
  [77, 10000], // Mac Roman
  [128, 932], // Shift_JIS
  [129, 949], // Hangul
  [130, 1361], // Johab
  [134, 936], // GB2312 / GBK
  [136, 950], // Big5
  [161, 1253], // Greek
  [162, 1254], // Turkish
  [163, 1258], // Vietnamese
  [177, 1255], // Hebrew
  [178, 1256], // Arabic
  [186, 1257], // Baltic
  [204, 1251], // Cyrillic
  [222, 874], // Thai
  [238, 1250], // Eastern European
  [254, 437], // PC 437
]);

// Code pages iconv-lite knows under another label.
const CODEPAGE_LABELS = new Map<number, string>([
  [10000, "macintosh"],
  [1361, "johab"],
]);

/** The iconv-lite label of Windows code page `cp`, or undefined when it cannot be decoded. */
export function codepageLabel(cp: number): string | undefined {
  const label = CODEPAGE_LABELS.get(cp) ?? `cp${cp}`;
  return charsetSupported(label) ? label : undefined;
}

/**
 * The code page of a font-table entry: its `\cpgN` when given, else its `\fcharsetN`;
 * undefined for the ANSI charset (0), the default (1) and symbol fonts (2), which use the
 * document's `\ansicpg`.
 */
export function fontCodepage(font: { charset?: number; cpg?: number }): number | undefined {
  return font.cpg ?? (font.charset === undefined ? undefined : CHARSET_CODEPAGES.get(font.charset));
}

/** A human name for a code page label in warnings ("cp932 (Shift_JIS)"). */
export function codepageName(label: string): string {
  const names: Record<string, string> = {
    cp932: "Shift_JIS",
    cp936: "GBK",
    cp950: "Big5",
    cp949: "Korean",
    cp1251: "Cyrillic",
    cp1250: "Central European",
    cp1253: "Greek",
    cp1254: "Turkish",
    cp1255: "Hebrew",
    cp1256: "Arabic",
    cp1257: "Baltic",
    cp874: "Thai",
  };
  return names[label] ? `${label} (${names[label]})` : label;
}
