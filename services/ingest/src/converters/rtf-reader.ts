// The RTF reader: one pass over the bytes, a group stack of states, destinations and control
// words dispatched by table (rtf-words.ts), text written to sinks (rtf-sink.ts).
import { InputError } from "@redline/service-kit";
import { decodeWith } from "../text/encoding.js";
import { codepageLabel, codepageName, fontCodepage } from "./rtf-codepages.js";
import { flushList, flushTable, type GroupState, newPara, newSink, plain, renderRuns, type Sink } from "./rtf-sink.js";
import {
  DESTINATION_MODES,
  FORMAT_WORDS,
  isHex,
  MAX_DEPTH,
  MAX_PICT_HEX,
  PART_DESTINATIONS,
  PICT_TYPES,
  SKIPPED,
  SYMBOLS,
} from "./rtf-words.js";

const isLetter = (b: number) => (b >= 0x61 && b <= 0x7a) || (b >= 0x41 && b <= 0x5a);

/** A header or footer destination and the sink its text went to. */
export interface RtfPart {
  part: "header" | "footer";
  variant: string;
  sink: Sink;
}

/** Reads an RTF document from `start` (the `{\rtf`) into body, footnote and part sinks. */
export class RtfReader {
  readonly warnings = new Set<string>([
    "RTF import keeps text, basic formatting, lists and simple tables; fonts, colours and layout were not kept",
  ]);
  readonly footnotes: Sink[] = [];
  readonly body = newSink();
  readonly parts: RtfPart[] = [];
  title = "";
  /** The document's code page (`\ansicpgN`, `\mac`, `\pc`), for fonts that name none. */
  private codepage = "windows-1252";
  /** Font number → its entry in the font table (`\fcharsetN`, `\cpgN`). */
  private readonly fonts = new Map<number, { charset?: number; cpg?: number }>();
  /** The font table entry being read, and the document's default font (`\deffN`). */
  private fontDef: number | null = null;
  private defaultFont: number | null = null;
  private state: GroupState = {
    fmt: plain(),
    mode: "text",
    uc: 1,
    field: null,
    href: null,
    sink: this.body,
    font: null,
    pict: null,
  };
  private readonly stack: GroupState[] = [];
  private groupStart = false;
  private ignorable = false;
  private skipChars = 0;
  private bytesPending: number[] = [];
  private unitsPending: number[] = [];
  private i: number;

  constructor(
    private readonly bytes: Buffer,
    start: number,
  ) {
    this.i = start;
  }

  /** Reads to the end of the outermost group; InputError when nested beyond MAX_DEPTH. */
  read(): void {
    const { bytes } = this;
    while (this.i < bytes.length) {
      const c = bytes[this.i];
      if (c === 0x7b /* { */) this.openGroup();
      else if (c === 0x7d /* } */) {
        if (!this.closeGroup()) break;
      } else if (c === 0x0d || c === 0x0a) this.i++;
      else if (c !== 0x5c /* \ */) this.plainByte(c);
      else if (bytes[this.i + 1] === undefined) break;
      else if (isLetter(bytes[this.i + 1])) this.controlWordAt();
      else this.controlSymbol(bytes[this.i + 1]);
    }
    this.flushText();
    this.endParagraph("par");
    for (const sink of [this.body, ...this.footnotes, ...this.parts.map((p) => p.sink)]) this.closeSink(sink);
  }

  /** Ends a sink's pending paragraph, table and list. */
  private closeSink(sink: Sink): void {
    if (sink.runs.length > 0) {
      this.state.sink = sink;
      this.endParagraph("par");
    }
    flushTable(sink);
    flushList(sink);
  }

  private openGroup(): void {
    this.flushText();
    if (this.stack.length >= MAX_DEPTH)
      throw new InputError("The .rtf file is nested too deeply to be a real document");
    this.stack.push(this.state);
    this.state = { ...this.state, fmt: { ...this.state.fmt } };
    this.groupStart = true;
    this.ignorable = false;
    this.skipChars = 0;
    this.i++;
  }

  /** Pops a group; false at a `}` without its `{` (the end of the document). */
  private closeGroup(): boolean {
    this.flushText();
    const prev = this.stack.pop();
    if (!prev) return false;
    if (this.state.mode === "pict" && prev.mode !== "pict") this.endPicture(this.state, prev);
    this.state = prev;
    this.groupStart = false;
    this.skipChars = 0;
    this.i++;
    return true;
  }

  /** A byte that is not markup: text, picture hex data, or nothing in a skipped destination. */
  private plainByte(c: number): void {
    const { bytes } = this;
    if (this.state.mode === "pict") {
      const pict = this.state.pict;
      if (pict && pict.size < MAX_PICT_HEX && isHex(c)) {
        // Runs of hex digits are taken in one slice rather than byte by byte.
        let j = this.i;
        while (j < bytes.length && j - this.i < 65536 && isHex(bytes[j])) j++;
        pict.hex.push(bytes.toString("latin1", this.i, j));
        pict.size += j - this.i;
        this.i = j;
      } else this.i++;
      return;
    }
    if (this.state.mode !== "skip") this.textByte(c);
    this.groupStart = false;
    this.i++;
  }

  /** Parses `\word` with its optional signed parameter and one delimiting space. */
  private parseControlWord(): { word: string; param: number | null } {
    const { bytes, i } = this;
    const n = bytes.length;
    let j = i + 1;
    while (j < n && j - i <= 32 && isLetter(bytes[j])) j++;
    const word = bytes.toString("latin1", i + 1, j);
    let param: number | null = null;
    const numStart = j;
    if (bytes[j] === 0x2d /* - */) j++;
    while (j < n && j - numStart <= 11 && bytes[j] >= 0x30 && bytes[j] <= 0x39) j++;
    if (j > numStart && !(j === numStart + 1 && bytes[numStart] === 0x2d))
      param = Number(bytes.toString("latin1", numStart, j));
    else j = numStart;
    if (bytes[j] === 0x20) j++;
    this.i = j;
    return { word, param };
  }

  private controlWordAt(): void {
    const { word, param } = this.parseControlWord();
    if (word === "bin") this.binary(param);
    else if (this.state.mode !== "skip") {
      if (word !== "u" && !SYMBOLS.get(word)) this.flushBytes();
      this.controlWord(word, param);
    }
    this.groupStart = false;
  }

  /** `\binN`: N raw bytes follow (a picture may be written so). */
  private binary(param: number | null): void {
    const length = Math.max(0, param ?? 0);
    const pict = this.state.pict;
    if (this.state.mode === "pict" && pict && pict.size + length * 2 <= MAX_PICT_HEX) {
      pict.binary.push(this.bytes.subarray(this.i, Math.min(this.bytes.length, this.i + length)));
      pict.size += length * 2;
    }
    this.i += length;
  }

  /** A control symbol: `\*`, `\'hh`, an escaped brace or backslash, `\~`, `\_`, `\<newline>`. */
  private controlSymbol(next: number): void {
    this.i += 2;
    if (next === 0x2a /* * */) {
      this.ignorable = true;
      return;
    }
    this.groupStart = false;
    if (this.state.mode === "skip") {
      if (next === 0x27) this.i += 2;
      return;
    }
    if (next === 0x27) {
      // \'hh: one byte in the document code page.
      const hex = this.bytes.toString("latin1", this.i, this.i + 2);
      this.i += 2;
      if (/^[0-9a-fA-F]{2}$/.test(hex)) this.textByte(Number.parseInt(hex, 16));
    } else if (next === 0x5c || next === 0x7b || next === 0x7d) this.textByte(next);
    else if (next === 0x7e /* ~ */) this.appendChar("\u00a0");
    else if (next === 0x5f /* _ */) this.appendChar("\u2011");
    else if (next === 0x0a || next === 0x0d) this.endParagraph("par");
  }

  private appendChar(text: string): void {
    this.flushText();
    this.append(text);
  }

  private append(text: string): void {
    if (!text) return;
    const state = this.state;
    if (state.mode === "text") {
      const runs = state.sink.runs;
      const last = runs[runs.length - 1];
      const same =
        last && !last.img && last.href === state.href && JSON.stringify(last.fmt) === JSON.stringify(state.fmt);
      if (same) last.text += text;
      else runs.push({ text, fmt: { ...state.fmt }, href: state.href });
    } else if (state.mode === "title") this.title += text;
    else if (state.mode === "fldinst") {
      if (state.field) state.field.inst += text;
    } else if (state.mode === "listtext") state.sink.para.listText += text;
  }

  private flushBytes(): void {
    if (this.bytesPending.length > 0) {
      const codepage = this.currentCodepage();
      const text = decodeWith(Uint8Array.from(this.bytesPending), codepage);
      // iconv-lite writes U+FFFD for a byte sequence the code page has no character for.
      if (text.includes("\uFFFD"))
        this.warnings.add(
          `Some characters could not be decoded from code page ${codepageName(codepage)} and show as \uFFFD; the file may declare the wrong font charset`,
        );
      this.append(text);
      this.bytesPending = [];
    }
  }

  /** The code page of the current font (its `\fcharset`), else the document's. */
  private currentCodepage(): string {
    const fontNumber = this.state.font ?? this.defaultFont;
    const font = fontNumber === null ? undefined : this.fonts.get(fontNumber);
    const cp = font ? fontCodepage(font) : undefined;
    if (cp === undefined) return this.codepage;
    const label = codepageLabel(cp);
    if (label) return label;
    this.warnings.add(`Text in code page ${cp} cannot be decoded and was read as ${codepageName(this.codepage)}`);
    return this.codepage;
  }

  /** A control word inside the font table: font numbers, their charsets and code pages. */
  private fontTableWord(word: string, param: number | null): void {
    if (param === null) return;
    if (word === "f") {
      this.fontDef = param;
      this.fonts.set(param, this.fonts.get(param) ?? {});
    } else if (this.fontDef !== null && (word === "fcharset" || word === "cpg")) {
      const font = this.fonts.get(this.fontDef) ?? {};
      if (word === "fcharset") font.charset = param;
      else font.cpg = param;
      this.fonts.set(this.fontDef, font);
    }
  }

  private flushUnits(): void {
    if (this.unitsPending.length > 0) {
      this.append(String.fromCharCode(...this.unitsPending));
      this.unitsPending = [];
    }
  }

  private flushText(): void {
    this.flushBytes();
    this.flushUnits();
  }

  private textByte(b: number): void {
    // Font names are not text (and may be in a code page of their own).
    if (this.state.mode === "fonttbl") return;
    if (this.skipChars > 0) {
      this.skipChars--;
      return;
    }
    this.flushUnits();
    this.bytesPending.push(b);
  }

  /** Ends the current paragraph; "cell" when it ends a table cell. */
  private endParagraph(kind: "par" | "cell"): void {
    this.flushText();
    const sink = this.state.sink;
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
  }

  /** Writes the group's text to a new sink (a footnote, header or footer) from plain formatting. */
  private divert(sink: Sink): void {
    this.state.sink = sink;
    this.state.fmt = plain();
  }

  /** The first control word of a group: true when it opened a destination. */
  private destination(word: string): boolean {
    const state = this.state;
    if (word === "shppict") return true; // a wrapper around the picture (\pict) to show
    if (word === "pict" && state.mode === "text") {
      state.mode = "pict";
      state.pict = { type: null, hex: [], size: 0, binary: [] };
      return true;
    }
    const partDestination = PART_DESTINATIONS.get(word);
    if (partDestination && state.mode === "text") {
      const sink = newSink();
      this.parts.push({ ...partDestination, sink });
      this.divert(sink);
      return true;
    }
    if (SKIPPED.has(word)) {
      if (word === "annotation") this.warnings.add("Comments were not imported");
      state.mode = "skip";
      return true;
    }
    const mode = DESTINATION_MODES.get(word);
    if (mode && (word !== "title" || state.mode === "info")) {
      state.mode = mode;
      return true;
    }
    if (word === "footnote") {
      const sink = newSink();
      this.footnotes.push(sink);
      this.divert(sink);
      return true;
    }
    if (!this.ignorable) return false;
    state.mode = "skip";
    return true;
  }

  private controlWord(word: string, param: number | null): void {
    if (this.groupStart) {
      this.groupStart = false;
      if (this.destination(word)) return;
    }
    const state = this.state;
    if (state.mode === "skip" || state.mode === "info") return;
    if (state.mode === "fonttbl") {
      this.fontTableWord(word, param);
      return;
    }
    if (word === "f") {
      // Fonts are checked in the font table (read before any text), not trusted by number.
      state.font = param;
      return;
    }
    if (state.mode === "pict") {
      const type = PICT_TYPES.get(word);
      if (type && state.pict) state.pict.type = type;
      return;
    }
    if (state.mode !== "text") {
      // Inside a field instruction, title or list number only characters matter.
      if (word === "u" || word === "uc" || SYMBOLS.get(word)) this.textControl(word, param);
      return;
    }
    if (this.textControl(word, param)) return;
    const format = FORMAT_WORDS.get(word);
    if (format) {
      this.flushText();
      format(state.fmt, param === null || param !== 0);
    } else this.structureWord(word, param);
  }

  /** Control words of paragraphs, tables, fields and footnotes (text mode only). */
  private structureWord(word: string, param: number | null): void {
    const state = this.state;
    const para = state.sink.para;
    switch (word) {
      case "ansicpg": {
        const label = param === null ? undefined : codepageLabel(param);
        if (label) this.codepage = label;
        else if (param !== null)
          this.warnings.add(`The document's code page ${param} cannot be decoded; its text was read as Windows-1252`);
        return;
      }
      case "mac":
        this.codepage = "macintosh";
        return;
      case "pc":
        this.codepage = "cp437";
        return;
      case "pca":
        this.codepage = "cp850";
        return;
      case "deff":
        this.defaultFont = param;
        return;
      case "par":
      case "sect":
      case "nestcell":
        this.endParagraph("par");
        return;
      case "cell":
        this.endParagraph("cell");
        return;
      case "row":
        this.flushText();
        if (state.sink.row.length > 0) state.sink.rows.push(state.sink.row);
        state.sink.row = [];
        return;
      case "pard":
        this.flushText();
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
      case "field":
        state.field = { inst: "" };
        return;
      case "fldrslt":
        this.fieldResult();
        return;
      case "chftn":
        this.footnoteMark();
        return;
    }
  }

  /** `\fldrslt`: a HYPERLINK field's result text links to its http(s)/mailto URL. */
  private fieldResult(): void {
    this.flushText();
    const url = /HYPERLINK\s+"([^"]+)"/.exec(this.state.field?.inst ?? "")?.[1];
    if (url && /^(https?:|mailto:)/i.test(url)) this.state.href = url;
  }

  /** `\chftn`: in the body it refers to the next footnote; inside a footnote it repeats its own number. */
  private footnoteMark(): void {
    if (this.state.sink !== this.body) return;
    this.flushText();
    const n = this.footnotes.length + 1;
    this.state.sink.runs.push({ text: `[${n}]`, fmt: { ...this.state.fmt, sup: true, sub: false }, href: null });
  }

  /** Handles the control words that produce characters; true when `word` was one. */
  private textControl(word: string, param: number | null): boolean {
    if (word === "uc") {
      this.state.uc = Math.max(0, param ?? 1);
      return true;
    }
    if (word === "u") {
      if (param === null) return true;
      this.flushBytes();
      this.unitsPending.push(param < 0 ? param + 65536 : param);
      this.skipChars = this.state.uc;
      return true;
    }
    const symbol = SYMBOLS.get(word);
    if (!symbol) return false;
    this.appendChar(symbol);
    return true;
  }

  /** Closes a \pict group: a JPEG or PNG becomes an image run where it stood; others are reported. */
  private endPicture(pictState: GroupState, parent: GroupState): void {
    const pict = pictState.pict;
    if (!pict) return;
    const data = pict.binary.length > 0 ? Buffer.concat(pict.binary) : Buffer.from(pict.hex.join(""), "hex");
    if (!pict.type || data.length === 0) {
      this.warnings.add("Some images are in formats browsers cannot show (WMF, EMF) and were not imported");
      return;
    }
    parent.sink.runs.push({
      text: "",
      fmt: { ...parent.fmt },
      href: parent.href,
      img: `data:${pict.type};base64,${data.toString("base64")}`,
    });
  }
}
