// The RTF reader's tables: which control words open destinations, which produce characters,
// which change character formatting. Maps, not object literals: control words come from the
// file, and "\\constructor" must not find Object.prototype.
import { type CharFormat, type Mode, plain } from "./rtf-sink.js";

/** Deepest group nesting a real document has; deeper is refused. */
export const MAX_DEPTH = 500;

/** An ASCII hex digit (picture data). */
export const isHex = (b: number) => (b >= 0x30 && b <= 0x39) || (b >= 0x41 && b <= 0x46) || (b >= 0x61 && b <= 0x66);

/** Destinations whose text is not document content. */
export const SKIPPED = new Set([
  "colortbl",
  "stylesheet",
  "listtable",
  "listoverridetable",
  "revtbl",
  "rsidtbl",
  "generator",
  "object",
  "shp",
  "nonshppict",
  "xmlnstbl",
  "themedata",
  "colorschememapping",
  "datastore",
  "latentstyles",
  "pgdsctbl",
  "filetbl",
  "author",
  "operator",
  "keywords",
  "subject",
  "doccomm",
  "comment",
  "company",
  "category",
  "hlinkbase",
  "fldtype",
  "bkmkstart",
  "bkmkend",
  "annotation",
  "atnid",
  "atnauthor",
  "atndate",
  "atnref",
  "userprops",
  "docvar",
  "xe",
  "tc",
  "template",
  "nextfile",
  "private",
  "pn",
  "pnseclvl",
  "listpicture",
  "mmathPr",
  "wgrffmtfilter",
  "passwordhash",
  "ftnsep",
  "ftnsepc",
  "aftnsep",
  "aftnsepc",
]);

/** Control words that stand for one character. */
export const SYMBOLS = new Map<string, string>([
  ["emdash", "\u2014"],
  ["endash", "\u2013"],
  ["bullet", "\u2022"],
  ["lquote", "\u2018"],
  ["rquote", "\u2019"],
  ["ldblquote", "\u201c"],
  ["rdblquote", "\u201d"],
  ["emspace", "\u2003"],
  ["enspace", "\u2002"],
  ["qmspace", "\u2005"],
  ["tab", "\t"],
  ["line", "\n"],
]);

/** Header/footer destinations and the Word variant each is (l = left = even pages). */
export const PART_DESTINATIONS = new Map<string, { part: "header" | "footer"; variant: string }>([
  ["header", { part: "header", variant: "default" }],
  ["headerr", { part: "header", variant: "default" }],
  ["headerl", { part: "header", variant: "even" }],
  ["headerf", { part: "header", variant: "first" }],
  ["footer", { part: "footer", variant: "default" }],
  ["footerr", { part: "footer", variant: "default" }],
  ["footerl", { part: "footer", variant: "even" }],
  ["footerf", { part: "footer", variant: "first" }],
]);
/** Picture formats a browser shows; others (WMF, EMF, PICT) are dropped with a warning. */
export const PICT_TYPES = new Map<string, string>([
  ["jpegblip", "image/jpeg"],
  ["pngblip", "image/png"],
]);
// One picture's data is bounded so a hostile file cannot grow one string without limit.
export const MAX_PICT_HEX = 64 * 1024 * 1024;

// Destinations read for something other than body text (title only counts inside \info).
export const DESTINATION_MODES = new Map<string, Mode>([
  ["info", "info"],
  ["fonttbl", "fonttbl"],
  ["title", "title"],
  ["fldinst", "fldinst"],
  ["listtext", "listtext"],
  ["pntext", "listtext"],
]);

/** Character-format control words: each sets `fmt` from `on` (false for a 0 parameter). */
export const FORMAT_WORDS = new Map<string, (fmt: CharFormat, on: boolean) => void>([
  ["plain", (f) => Object.assign(f, plain())],
  ["b", (f, on) => (f.b = on)],
  ["v", (f, on) => (f.v = on)],
  ["i", (f, on) => (f.i = on)],
  ...["ul", "uld", "uldb", "ulw", "uldash", "ulth", "ulwave"].map(
    (w) => [w, (f: CharFormat, on: boolean) => (f.u = on)] as const,
  ),
  ["ulnone", (f) => (f.u = false)],
  ["strike", (f, on) => (f.s = on)],
  ["striked", (f, on) => (f.s = on)],
  ["super", (f, on) => Object.assign(f, { sup: on, sub: false })],
  ["sub", (f, on) => Object.assign(f, { sub: on, sup: false })],
  ["nosupersub", (f) => Object.assign(f, { sup: false, sub: false })],
]);
