// RTF → HTML with a small single-pass reader (rtf.js needs jsdom globals in the process and
// flattens tables anyway): it keeps paragraphs, bold/italic/underline/strike/super/subscript,
// hyperlinks, flat lists, tables (\trowd/\cell), outline-level headings, footnotes, JPEG and
// PNG pictures (as data: images, moved to the object store by ingest), and headers and footers
// as out-of-flow parts; fonts, colours, shapes and WMF/EMF pictures are dropped with a warning.
import { InputError } from "@redline/service-kit";
import { baseTitle, type ConvertResult } from "../formats.js";
import { charsetSupported, decodeWith } from "./encoding.js";
import { collapseWhitespace, escapeHtml, firstHeadingText } from "./html-util.js";

const MAX_DEPTH = 500;

const isHex = (b: number) => (b >= 0x30 && b <= 0x39) || (b >= 0x41 && b <= 0x46) || (b >= 0x61 && b <= 0x66);

// Destinations whose text is not document content.
const SKIPPED = new Set([
  "fonttbl",
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

// Maps, not object literals: control words come from the file, and "\\constructor" must not
// find Object.prototype.
const SYMBOLS = new Map<string, string>([
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

interface CharFormat {
  b: boolean;
  i: boolean;
  u: boolean;
  s: boolean;
  sup: boolean;
  sub: boolean;
}

type Mode = "text" | "skip" | "info" | "title" | "fldinst" | "listtext" | "pict";

/** Header/footer destinations and the Word variant each is (l = left = even pages). */
const PART_DESTINATIONS = new Map<string, { part: "header" | "footer"; variant: string }>([
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
const PICT_TYPES = new Map<string, string>([
  ["jpegblip", "image/jpeg"],
  ["pngblip", "image/png"],
]);
// One picture's data is bounded so a hostile file cannot grow one string without limit.
const MAX_PICT_HEX = 64 * 1024 * 1024;

// Destinations read for something other than body text (title only counts inside \info).
const DESTINATION_MODES = new Map<string, Mode>([
  ["info", "info"],
  ["title", "title"],
  ["fldinst", "fldinst"],
  ["listtext", "listtext"],
  ["pntext", "listtext"],
]);

interface Field {
  inst: string;
}

/** Paragraph properties; Word resets them with \pard. */
interface ParaProps {
  inTable: boolean;
  list: boolean;
  outline: number;
  /** The visible list number or bullet Word writes in \listtext ("1)", "·"). */
  listText: string;
}

/** Where text goes: the body, or one footnote (each has its own pending paragraph). */
interface Sink {
  para: ParaProps;
  blocks: string[];
  runs: { text: string; fmt: CharFormat; href: string | null; img?: string }[];
  cell: string[];
  row: string[];
  rows: string[][];
  list: { ordered: boolean; items: string[] } | null;
}

interface GroupState {
  fmt: CharFormat;
  mode: Mode;
  uc: number;
  field: Field | null;
  href: string | null;
  sink: Sink;
  /** The picture being read (mode "pict"): its type and hex data. */
  pict: { type: string | null; hex: string[]; size: number; binary: Buffer[] } | null;
}

const newPara = (): ParaProps => ({ inTable: false, list: false, outline: -1, listText: "" });
const newSink = (): Sink => ({ para: newPara(), blocks: [], runs: [], cell: [], row: [], rows: [], list: null });
const plain = (): CharFormat => ({ b: false, i: false, u: false, s: false, sup: false, sub: false });

function renderRuns(runs: Sink["runs"]): string {
  let html = "";
  for (const run of runs) {
    if (run.img) {
      html += `<img src="${run.img}">`;
      continue;
    }
    let piece = escapeHtml(run.text).replace(/\n/g, "<br>").replace(/\t/g, " ");
    if (run.fmt.sub) piece = `<sub>${piece}</sub>`;
    if (run.fmt.sup) piece = `<sup>${piece}</sup>`;
    if (run.fmt.s) piece = `<s>${piece}</s>`;
    if (run.fmt.u) piece = `<u>${piece}</u>`;
    if (run.fmt.i) piece = `<em>${piece}</em>`;
    if (run.fmt.b) piece = `<strong>${piece}</strong>`;
    if (run.href) piece = `<a href="${escapeHtml(run.href)}">${piece}</a>`;
    html += piece;
  }
  // Adjacent runs with the same formatting produce "</strong><strong>"; merge them back.
  return html.replace(/<\/(strong|em|u|s|sup|sub)><\1>/g, "");
}

/**
 * Converts an RTF document to HTML. Text in `\'hh` escapes is decoded with the declared
 * `\ansicpgN` code page (Windows-1252 by default) and `\uN` escapes as UTF-16. Throws
 * InputError when the file is not RTF or is nested beyond reason.
 */
export async function convertRtf(bytes: Buffer, filename: string): Promise<ConvertResult> {
  const start = bytes.indexOf("{\\rtf");
  if (start < 0 || start > 16)
    throw new InputError("The .rtf file is not an RTF document (it does not start with {\\rtf)");

  const warnings = new Set<string>([
    "RTF import keeps text, basic formatting, lists and simple tables; fonts, colours and layout were not kept",
  ]);
  const footnotes: Sink[] = [];
  const body = newSink();
  let codepage = "windows-1252";
  let title = "";
  let state: GroupState = { fmt: plain(), mode: "text", uc: 1, field: null, href: null, sink: body, pict: null };
  const parts: { part: "header" | "footer"; variant: string; sink: Sink }[] = [];
  const stack: GroupState[] = [];
  let groupStart = false;
  let ignorable = false;
  let skipChars = 0;
  let bytesPending: number[] = [];
  let unitsPending: number[] = [];

  const append = (text: string) => {
    if (!text) return;
    switch (state.mode) {
      case "text": {
        const runs = state.sink.runs;
        const last = runs[runs.length - 1];
        const same =
          last && !last.img && last.href === state.href && JSON.stringify(last.fmt) === JSON.stringify(state.fmt);
        if (same) last.text += text;
        else runs.push({ text, fmt: { ...state.fmt }, href: state.href });
        break;
      }
      case "title":
        title += text;
        break;
      case "fldinst":
        if (state.field) state.field.inst += text;
        break;
      case "listtext":
        state.sink.para.listText += text;
        break;
      default:
        break;
    }
  };
  const flushText = () => {
    if (bytesPending.length > 0) {
      append(decodeWith(Uint8Array.from(bytesPending), codepage));
      bytesPending = [];
    }
    if (unitsPending.length > 0) {
      append(String.fromCharCode(...unitsPending));
      unitsPending = [];
    }
  };
  const flushTable = (sink: Sink) => {
    if (sink.rows.length === 0) return;
    const rows = sink.rows.map((r) => `<tr>${r.map((c) => `<td>${c}</td>`).join("")}</tr>`).join("");
    sink.blocks.push(`<table><tbody>${rows}</tbody></table>`);
    sink.rows = [];
  };
  const flushList = (sink: Sink) => {
    if (!sink.list) return;
    const tag = sink.list.ordered ? "ol" : "ul";
    sink.blocks.push(`<${tag}>${sink.list.items.map((i) => `<li>${i}</li>`).join("")}</${tag}>`);
    sink.list = null;
  };
  /** Ends the current paragraph; `inCell` when it ends a table cell's paragraph. */
  const endParagraph = (kind: "par" | "cell") => {
    flushText();
    const sink = state.sink;
    const para = sink.para;
    const html = renderRuns(sink.runs).trim();
    sink.runs = [];
    // Word writes the visible number in \listtext: "1)" or "a." means an ordered list.
    const ordered = /^\s*[\dA-Za-z]{1,4}[.)]/.test(para.listText);
    para.listText = "";
    if (kind === "cell" || para.inTable) {
      if (html) sink.cell.push(`<p>${html}</p>`);
      if (kind === "cell") {
        sink.row.push(sink.cell.join(""));
        sink.cell = [];
      }
      return;
    }
    flushTable(sink);
    if (para.list && html) {
      if (sink.list && sink.list.ordered !== ordered) flushList(sink);
      sink.list ??= { ordered, items: [] };
      sink.list.items.push(html);
      return;
    }
    flushList(sink);
    if (!html) return;
    if (para.outline >= 0 && para.outline <= 5)
      sink.blocks.push(`<h${para.outline + 1}>${html}</h${para.outline + 1}>`);
    else sink.blocks.push(`<p>${html}</p>`);
  };

  const controlWord = (word: string, param: number | null) => {
    if (groupStart) {
      groupStart = false;
      if (word === "shppict") return; // a wrapper around the picture (\pict) to show
      if (word === "pict" && state.mode === "text") {
        state.mode = "pict";
        state.pict = { type: null, hex: [], size: 0, binary: [] };
        return;
      }
      const partDestination = PART_DESTINATIONS.get(word);
      if (partDestination && state.mode === "text") {
        const sink = newSink();
        parts.push({ ...partDestination, sink });
        state.sink = sink;
        state.fmt = plain();
        return;
      }
      if (SKIPPED.has(word)) {
        if (word === "annotation") warnings.add("Comments were not imported");
        state.mode = "skip";
        return;
      }
      const mode = DESTINATION_MODES.get(word);
      if (mode && (word !== "title" || state.mode === "info")) {
        state.mode = mode;
        return;
      }
      if (word === "footnote") {
        const sink = newSink();
        footnotes.push(sink);
        state.sink = sink;
        state.fmt = plain();
        return;
      }
      if (ignorable) {
        state.mode = "skip";
        return;
      }
    }
    if (state.mode === "skip" || state.mode === "info") return;
    if (state.mode === "pict") {
      const type = PICT_TYPES.get(word);
      if (type && state.pict) state.pict.type = type;
      return;
    }
    if (state.mode !== "text") {
      // Inside a field instruction, title or list number only characters matter.
      if (word === "u" || word === "uc" || SYMBOLS.get(word)) textControl(word, param);
      return;
    }
    if (textControl(word, param)) return;
    const para = state.sink.para;
    const on = param === null || param !== 0;
    switch (word) {
      case "ansicpg": {
        const cp = `cp${param}`;
        if (param !== null && charsetSupported(cp)) codepage = cp;
        return;
      }
      case "par":
      case "sect":
        return endParagraph("par");
      case "cell":
      case "nestcell":
        return endParagraph(word === "cell" ? "cell" : "par");
      case "row": {
        flushText();
        const sink = state.sink;
        if (sink.row.length > 0) sink.rows.push(sink.row);
        sink.row = [];
        return;
      }
      case "pard":
        flushText();
        state.sink.para = { ...newPara(), listText: para.listText };
        return;
      case "intbl":
        para.inTable = true;
        return;
      case "ls":
        para.list = true;
        return;
      case "outlinelevel":
        para.outline = param ?? -1;
        return;
      case "plain":
        flushText();
        state.fmt = plain();
        return;
      case "b":
      case "i":
        flushText();
        state.fmt[word] = on;
        return;
      case "ul":
      case "uld":
      case "uldb":
      case "ulw":
      case "uldash":
      case "ulth":
      case "ulwave":
        flushText();
        state.fmt.u = on;
        return;
      case "ulnone":
        flushText();
        state.fmt.u = false;
        return;
      case "strike":
      case "striked":
        flushText();
        state.fmt.s = on;
        return;
      case "super":
        flushText();
        state.fmt.sup = on;
        state.fmt.sub = false;
        return;
      case "sub":
        flushText();
        state.fmt.sub = on;
        state.fmt.sup = false;
        return;
      case "nosupersub":
        flushText();
        state.fmt.sup = false;
        state.fmt.sub = false;
        return;
      case "field":
        state.field = { inst: "" };
        return;
      case "fldrslt": {
        flushText();
        const url = /HYPERLINK\s+"([^"]+)"/.exec(state.field?.inst ?? "")?.[1];
        state.href = url && /^(https?:|mailto:)/i.test(url) ? url : state.href;
        return;
      }
      case "chftn":
        // Inside a footnote the mark repeats the footnote's own number; in the body it refers to it.
        if (state.sink === body) {
          flushText();
          const n = footnotes.length + 1;
          const runs = state.sink.runs;
          runs.push({ text: `[${n}]`, fmt: { ...state.fmt, sup: true, sub: false }, href: null });
        }
        return;
      default:
        return;
    }
  };
  /** Handles the control words that produce characters; true when `word` was one. */
  const textControl = (word: string, param: number | null): boolean => {
    if (word === "uc") {
      state.uc = Math.max(0, param ?? 1);
      return true;
    }
    if (word === "u") {
      if (param === null) return true;
      flushBytes();
      unitsPending.push(param < 0 ? param + 65536 : param);
      skipChars = state.uc;
      return true;
    }
    const symbol = SYMBOLS.get(word);
    if (!symbol) return false;
    flushText();
    append(symbol);
    return true;
  };
  const flushBytes = () => {
    if (bytesPending.length > 0) {
      append(decodeWith(Uint8Array.from(bytesPending), codepage));
      bytesPending = [];
    }
  };
  const textByte = (b: number) => {
    if (skipChars > 0) {
      skipChars--;
      return;
    }
    if (unitsPending.length > 0) {
      append(String.fromCharCode(...unitsPending));
      unitsPending = [];
    }
    bytesPending.push(b);
  };

  /** Closes a \pict group: a JPEG or PNG becomes an image run where it stood; others are reported. */
  const endPicture = (pictState: GroupState, parent: GroupState) => {
    const pict = pictState.pict;
    if (!pict) return;
    const data = pict.binary.length > 0 ? Buffer.concat(pict.binary) : Buffer.from(pict.hex.join(""), "hex");
    if (!pict.type || data.length === 0) {
      warnings.add("Some images are in formats browsers cannot show (WMF, EMF) and were not imported");
      return;
    }
    parent.sink.runs.push({
      text: "",
      fmt: { ...parent.fmt },
      href: parent.href,
      img: `data:${pict.type};base64,${data.toString("base64")}`,
    });
  };

  let i = start;
  const n = bytes.length;
  while (i < n) {
    const c = bytes[i];
    if (c === 0x7b /* { */) {
      flushText();
      if (stack.length >= MAX_DEPTH) throw new InputError("The .rtf file is nested too deeply to be a real document");
      stack.push(state);
      state = { ...state, fmt: { ...state.fmt } };
      groupStart = true;
      ignorable = false;
      skipChars = 0;
      i++;
      continue;
    }
    if (c === 0x7d /* } */) {
      flushText();
      const prev = stack.pop();
      if (!prev) break;
      if (state.mode === "pict" && prev.mode !== "pict") endPicture(state, prev);
      state = prev;
      groupStart = false;
      skipChars = 0;
      i++;
      continue;
    }
    if (c === 0x0d || c === 0x0a) {
      i++;
      continue;
    }
    if (c !== 0x5c /* \ */) {
      if (state.mode === "pict") {
        const pict = state.pict;
        if (pict && pict.size < MAX_PICT_HEX && /[0-9a-fA-F]/.test(String.fromCharCode(c))) {
          // Runs of hex digits are taken in one slice rather than byte by byte.
          let j = i;
          while (j < n && j - i < 65536 && isHex(bytes[j])) j++;
          pict.hex.push(bytes.toString("latin1", i, j));
          pict.size += j - i;
          i = j;
          continue;
        }
        i++;
        continue;
      }
      if (state.mode !== "skip") textByte(c);
      groupStart = false;
      i++;
      continue;
    }
    // A control sequence.
    const next = bytes[i + 1];
    if (next === undefined) break;
    if ((next >= 0x61 && next <= 0x7a) || (next >= 0x41 && next <= 0x5a)) {
      let j = i + 1;
      while (j < n && j - i <= 32 && ((bytes[j] >= 0x61 && bytes[j] <= 0x7a) || (bytes[j] >= 0x41 && bytes[j] <= 0x5a)))
        j++;
      const word = bytes.toString("latin1", i + 1, j);
      let param: number | null = null;
      const numStart = j;
      if (bytes[j] === 0x2d /* - */) j++;
      while (j < n && j - numStart <= 11 && bytes[j] >= 0x30 && bytes[j] <= 0x39) j++;
      if (j > numStart && !(j === numStart + 1 && bytes[numStart] === 0x2d))
        param = Number(bytes.toString("latin1", numStart, j));
      else j = numStart;
      if (bytes[j] === 0x20) j++;
      i = j;
      if (word === "bin") {
        // Raw binary data follows; its length is the parameter (a picture may be written so).
        const length = Math.max(0, param ?? 0);
        if (state.mode === "pict" && state.pict && state.pict.size + length * 2 <= MAX_PICT_HEX) {
          state.pict.binary.push(bytes.subarray(i, Math.min(n, i + length)));
          state.pict.size += length * 2;
        }
        i += length;
        groupStart = false;
        continue;
      }
      if (state.mode === "skip") {
        groupStart = false;
        continue;
      }
      if (word !== "u" && !SYMBOLS.get(word)) flushBytes();
      controlWord(word, param);
      groupStart = false;
      continue;
    }
    i += 2;
    if (next === 0x2a /* * */) {
      ignorable = true;
      continue;
    }
    groupStart = false;
    if (state.mode === "skip") {
      if (next === 0x27) i += 2;
      continue;
    }
    switch (next) {
      case 0x27: {
        // \'hh: one byte in the document code page.
        const hex = bytes.toString("latin1", i, i + 2);
        i += 2;
        if (/^[0-9a-fA-F]{2}$/.test(hex)) textByte(Number.parseInt(hex, 16));
        break;
      }
      case 0x5c:
      case 0x7b:
      case 0x7d:
        textByte(next);
        break;
      case 0x7e /* ~ */:
        flushText();
        append("\u00a0");
        break;
      case 0x5f /* _ */:
        flushText();
        append("\u2011");
        break;
      case 0x0a:
      case 0x0d:
        endParagraph("par");
        break;
      default:
        break;
    }
  }
  flushText();
  endParagraph("par");
  for (const sink of [body, ...footnotes]) {
    if (sink.runs.length > 0) {
      state.sink = sink;
      endParagraph("par");
    }
    flushTable(sink);
    flushList(sink);
  }

  for (const part of parts) {
    if (part.sink.runs.length > 0) {
      state.sink = part.sink;
      endParagraph("par");
    }
    flushTable(part.sink);
    flushList(part.sink);
  }
  // Headers and footers are out-of-flow parts (docs/ARCHITECTURE.md): one block each, headers
  // first and footers last, each distinct text once.
  const partBlock = (p: (typeof parts)[number]) => {
    const inner = p.sink.blocks
      .map((b) => b.replace(/^<p>([\s\S]*)<\/p>$/, "$1"))
      .filter((b) => b.trim() !== "")
      .join("<br>");
    return inner ? `<p data-part="${p.part}" data-variant="${p.variant}">${inner}</p>` : "";
  };
  const seenParts = new Set<string>();
  const partHtml = (kind: "header" | "footer") =>
    parts
      .filter((p) => p.part === kind)
      .map(partBlock)
      .filter((b) => b !== "" && !seenParts.has(b) && seenParts.add(b));
  const blocks = [...partHtml("header"), ...body.blocks];
  if (footnotes.length > 0) {
    const items = footnotes.map((f, k) => `<li id="footnote-${k + 1}">${f.blocks.join("")}</li>`).join("");
    blocks.push(`<ol data-part="footnote">${items}</ol>`);
  }
  blocks.push(...partHtml("footer"));
  const html = blocks.join("\n");
  return {
    html,
    title: collapseWhitespace(title) || firstHeadingText(html) || baseTitle(filename),
    pageSetup: null,
    warnings: [...warnings],
    format: "rtf",
  };
}
