// The RTF reader's model: character formats, paragraph properties, and the sinks text is
// written to (the body, each footnote, each header or footer), rendered to HTML blocks.
import { HIDDEN_SPAN_OPEN } from "../docx/hidden.js";
import { escapeHtml } from "../html/util.js";

/** Character formatting of a run (bold, italic, underline, strike, superscript, subscript, hidden). */
export interface CharFormat {
  /** Hidden text (`\v`): kept, not shown, as the docx import keeps w:vanish. */
  v: boolean;
  b: boolean;
  i: boolean;
  u: boolean;
  s: boolean;
  sup: boolean;
  sub: boolean;
}

/**
 * What the current group's text is: body text, skipped, document info, its title, a field
 * instruction, a list number, picture data, or the font table (read for its code pages).
 */
export type Mode = "text" | "skip" | "info" | "title" | "fldinst" | "listtext" | "pict" | "fonttbl";

/** The field being read: its instruction text (HYPERLINK "url" makes the result a link). */
export interface Field {
  inst: string;
}

/** Paragraph properties; Word resets them with \pard. */
export interface ParaProps {
  inTable: boolean;
  list: boolean;
  outline: number;
  /** The visible list number or bullet Word writes in \listtext ("1)", "·"). */
  listText: string;
}

/** Where text goes: the body, or one footnote (each has its own pending paragraph). */
export interface Sink {
  para: ParaProps;
  blocks: string[];
  runs: { text: string; fmt: CharFormat; href: string | null; img?: string }[];
  cell: string[];
  row: string[];
  rows: string[][];
  list: { ordered: boolean; items: string[] } | null;
}

/** The state a `{` saves and its `}` restores. */
export interface GroupState {
  fmt: CharFormat;
  mode: Mode;
  uc: number;
  field: Field | null;
  href: string | null;
  sink: Sink;
  /** The current font (`\fN`); null: the document's default font (`\deffN`). */
  font: number | null;
  /** The picture being read (mode "pict"): its type and hex data. */
  pict: { type: string | null; hex: string[]; size: number; binary: Buffer[] } | null;
}

/** Word's default paragraph (what \pard resets to). */
export const newPara = (): ParaProps => ({ inTable: false, list: false, outline: -1, listText: "" });
/** An empty sink. */
export const newSink = (): Sink => ({ para: newPara(), blocks: [], runs: [], cell: [], row: [], rows: [], list: null });
/** No character formatting (\plain). */
export const plain = (): CharFormat => ({ v: false, b: false, i: false, u: false, s: false, sup: false, sub: false });

/** The runs of one paragraph as inline HTML, formatting tags nested in a fixed order. */
export function renderRuns(runs: Sink["runs"]): string {
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
    if (run.fmt.v) piece = `${HIDDEN_SPAN_OPEN}${piece}</span>`;
    html += piece;
  }
  // Adjacent runs with the same formatting produce "</strong><strong>"; merge them back.
  return html.replace(/<\/(strong|em|u|s|sup|sub)><\1>/g, "");
}

/** Closes the sink's pending table as one block. */
export function flushTable(sink: Sink): void {
  if (sink.rows.length === 0) return;
  const rows = sink.rows.map((r) => `<tr>${r.map((c) => `<td>${c}</td>`).join("")}</tr>`).join("");
  sink.blocks.push(`<table><tbody>${rows}</tbody></table>`);
  sink.rows = [];
}

/** Closes the sink's pending list as one block. */
export function flushList(sink: Sink): void {
  if (!sink.list) return;
  const tag = sink.list.ordered ? "ol" : "ul";
  sink.blocks.push(`<${tag}>${sink.list.items.map((i) => `<li>${i}</li>`).join("")}</${tag}>`);
  sink.list = null;
}
