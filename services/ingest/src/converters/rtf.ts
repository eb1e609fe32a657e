// RTF → HTML with a small single-pass reader. Minimal on purpose (rtf.js needs jsdom globals
// in the process and flattens tables anyway): it keeps paragraphs, bold/italic/underline/
// strike/super/subscript, hyperlinks, flat lists, simple tables, outline-level headings and
// footnotes; fonts, colours, images, shapes, headers and footers are dropped with a warning.
import { InputError } from "@redline/service-kit";
import { baseTitle, type ConvertResult } from "../formats.js";
import { charsetSupported, decodeWith } from "./encoding.js";
import { collapseWhitespace, escapeHtml, firstHeadingText } from "./html-util.js";

const MAX_DEPTH = 500;

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
  "pict",
  "object",
  "shp",
  "shppict",
  "nonshppict",
  "header",
  "headerl",
  "headerr",
  "headerf",
  "footer",
  "footerl",
  "footerr",
  "footerf",
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

type Mode = "text" | "skip" | "info" | "title" | "fldinst" | "listtext";

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
  runs: { text: string; fmt: CharFormat; href: string | null }[];
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
}

const newPara = (): ParaProps => ({ inTable: false, list: false, outline: -1, listText: "" });
const newSink = (): Sink => ({ para: newPara(), blocks: [], runs: [], cell: [], row: [], rows: [], list: null });
const plain = (): CharFormat => ({ b: false, i: false, u: false, s: false, sup: false, sub: false });

function renderRuns(runs: Sink["runs"]): string {
  let html = "";
  for (const run of runs) {
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
  let state: GroupState = { fmt: plain(), mode: "text", uc: 1, field: null, href: null, sink: body };
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
        const same = last && last.href === state.href && JSON.stringify(last.fmt) === JSON.stringify(state.fmt);
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
      if (SKIPPED.has(word)) {
        if (word === "pict" || word === "shppict") warnings.add("Images were not imported");
        if (word.startsWith("header") || word.startsWith("footer"))
          warnings.add("Headers and footers were not imported");
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
        // Raw binary data follows; its length is the parameter.
        i += Math.max(0, param ?? 0);
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

  const blocks = [...body.blocks];
  if (footnotes.length > 0) {
    const items = footnotes.map((f, k) => `<li id="footnote-${k + 1}">${f.blocks.join("")}</li>`).join("");
    blocks.push(`<ol>${items}</ol>`);
  }
  const html = blocks.join("\n");
  return {
    html,
    title: collapseWhitespace(title) || firstHeadingText(html) || baseTitle(filename),
    pageSetup: null,
    warnings: [...warnings],
    format: "rtf",
  };
}
