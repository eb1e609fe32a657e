// The offline engine: the default when no LLM is configured. It understands a small,
// documented set of instructions (docs/offline-engine.md) and maps each to the same
// WorkingDocument operations an LLM would make, deterministically and without network.
import {
  addTableRow,
  ChunkError,
  type OutlineEntry,
  replaceText,
  sectionSpan,
  ToolError,
  textOf,
  type WorkingDocument,
  wrapPhrase,
} from "@redline/html-chunks";
import { parseFilesInstruction, runFilesInstruction } from "./files-tools.js";
import { type OfflineInstruction, parseOfflineInstruction } from "./offline-parse.js";
import { BudgetExceededError, TurnBudget } from "./turn-budget.js";
import type { Engine, TurnInput, TurnOutput } from "./types.js";

export { type OfflineInstruction, parseOfflineInstruction } from "./offline-parse.js";

/**
 * Creates the offline engine. It never calls a model: `bytesSentToModel` is always 0.
 * `cpuBudgetMs` (default OFFLINE_CPU_BUDGET_MS) bounds one turn's processing time.
 */
export function createOfflineEngine(opts: { cpuBudgetMs?: number } = {}): Engine {
  const budgetMs = opts.cpuBudgetMs ?? OFFLINE_CPU_BUDGET_MS;
  return {
    name: "offline",
    async runTurn(input: TurnInput): Promise<TurnOutput> {
      input.signal.throwIfAborted();
      const filesInstruction = input.files ? parseFilesInstruction(input.message) : null;
      if (filesInstruction && input.files) {
        const done = await runFilesInstruction(filesInstruction, input.files, input.document);
        return { reply: done.reply, toolCalls: done.toolCalls, bytesSentToModel: 0 };
      }
      const instruction = parseOfflineInstruction(input.message);
      if (instruction.kind !== "unknown") input.onProgress?.(PROGRESS[instruction.kind]);
      const budget = new TurnBudget({
        budgetMs,
        sliceMs: OFFLINE_SLICE_MS,
        signal: input.signal,
      });
      const editor = new Editor(input.document, budget);
      try {
        const reply = await execute(editor, instruction, input);
        return { reply, toolCalls: editor.calls, bytesSentToModel: 0 };
      } catch (err) {
        // Raised only while edits are being computed, before any is applied: nothing changed.
        if (!(err instanceof BudgetExceededError)) throw err;
        return { reply: tooMuchWork(instruction, budgetMs), toolCalls: 0, bytesSentToModel: 0 };
      }
    },
  };
}

/**
 * Processing time one offline turn may spend on the document, in ms, and the longest stretch of
 * it between two yields to the event loop. Parsing is linear and bounded by the message cap
 * (milliseconds); what remains is document passes, linear in the document: the heaviest
 * instruction on a 200-page contract (about 2,000 chunks) takes a few hundred ms, so 5 s leaves
 * ample room while bounding what one free message can cost, and 20 ms slices keep every other
 * request on this event loop waiting at most about one slice (plus one chunk's step).
 */
const OFFLINE_CPU_BUDGET_MS = 5_000;
const OFFLINE_SLICE_MS = 20;

/**
 * Longest text to find (replace) or to format, in characters. The search pattern is built from
 * it and V8 rejects patterns much past 30,000 characters; no real phrase comes near this.
 */
export const MAX_PHRASE_CHARS = 10_000;

function tooMuchWork(instruction: OfflineInstruction, budgetMs: number): string {
  const hint = instruction.kind === "replace" && !instruction.section ? ' (for example: … in section "Heading")' : "";
  return `That instruction needs more processing than one turn may use on a document this large (${budgetMs / 1000} s), so nothing was changed. Try a narrower instruction${hint}.`;
}

const PROGRESS: Record<Exclude<OfflineInstruction["kind"], "unknown">, string> = {
  replace: "Replacing text",
  "rename-heading": "Renaming a heading",
  "delete-section": "Deleting a section",
  "delete-paragraph": "Deleting a paragraph",
  "add-paragraph": "Adding a paragraph",
  "add-section": "Adding a section",
  "add-row": "Adding a table row",
  format: "Formatting text",
  "show-section": "Reading a section",
  "draft-outline": "Drafting an outline",
};

/** The reply for messages outside the grammar; also the body of docs/offline-engine.md's summary. */
export const OFFLINE_HELP = [
  "I did not change anything: without an AI model configured I only understand these instructions (put the text in quotes):",
  '- replace "old" with "new" (add: in section "Heading" to limit it to one section)',
  '- rename heading "Old" to "New"',
  '- delete section "Heading" / delete paragraph containing "some text"',
  '- add paragraph "text" after section "Heading"',
  '- add section "Title" after section "Heading" (optionally: with text "body")',
  '- add row "a | b | c" to table 2 (or: to the table in section "Heading")',
  '- make "phrase" bold / make "phrase" italic',
  '- show section "Heading"',
  '- draft an outline for "Topic" (empty document only)',
  '- search attachments for "words" / quote attachment "file name" (optionally: about "words")',
  '- draft from template "Template name" (empty document only)',
].join("\n");

// ---------------------------------------------------------------------------
// Execution

/** Counts the document operations the turn makes; reported as `toolCalls`. */
class Editor {
  calls = 0;
  private outlineCache: OutlineEntry[] | null = null;
  private tagCache: Map<string, string> | null = null;

  constructor(
    readonly doc: WorkingDocument,
    private readonly budget: TurnBudget,
  ) {}

  outline(): OutlineEntry[] {
    this.outlineCache ??= this.doc.outline();
    return this.outlineCache;
  }

  /** The chunk's tag per the outline ("" when unknown); a map, as callers ask for every chunk. */
  tag(chunkId: string): string {
    this.tagCache ??= new Map(this.outline().map((entry) => [entry.chunkId, entry.tag]));
    return this.tagCache.get(chunkId) ?? "";
  }

  /** Between steps of a document pass; see TurnBudget.tick (`mayStop` false once edits are being applied). */
  tick(mayStop = true): Promise<void> {
    return this.budget.tick(mayStop);
  }

  replace(chunkId: string, html: string, explanation: string): void {
    this.calls++;
    this.outlineCache = null;
    this.tagCache = null;
    this.doc.replace(chunkId, html, explanation);
  }

  insertAfter(afterChunkId: string | null, html: string, explanation: string): string {
    this.calls++;
    this.outlineCache = null;
    this.tagCache = null;
    const inserted = this.doc.insertAfter(afterChunkId, html, explanation);
    return inserted[inserted.length - 1].chunkId;
  }

  delete(chunkId: string, explanation: string): void {
    this.calls++;
    this.outlineCache = null;
    this.tagCache = null;
    this.doc.delete(chunkId, explanation);
  }
}

async function execute(
  editor: Editor,
  instruction: OfflineInstruction,
  input: Pick<TurnInput, "documentTitle" | "responseMode">,
): Promise<string> {
  if (instruction.kind === "unknown") return OFFLINE_HELP;
  if (instruction.kind === "draft-outline")
    return draftOutline(editor, instruction.topic || input.documentTitle.trim());
  if (editor.doc.isEmpty()) {
    return 'The document is empty, so there is nothing to change. Try: draft an outline for "Topic".';
  }
  try {
    switch (instruction.kind) {
      case "replace":
        return await replaceEverywhere(editor, instruction.find, instruction.replacement, instruction.section);
      case "rename-heading":
        return await renameHeading(editor, instruction.heading, instruction.newTitle);
      case "delete-section":
        return await deleteSection(editor, instruction.section);
      case "delete-paragraph":
        return await deleteParagraph(editor, instruction.containing);
      case "add-paragraph":
        return await addParagraph(editor, instruction.text, instruction.section);
      case "add-section":
        return await addSection(editor, instruction.title, instruction.section, instruction.body);
      case "add-row":
        return await addRow(editor, instruction.cells, instruction.table);
      case "format":
        return await formatPhrase(editor, instruction.phrase, instruction.tag);
      case "show-section":
        return await showSection(editor, instruction.section, SHOW_LIMITS[input.responseMode ?? "full"]);
    }
  } catch (err) {
    // Edits are computed before any is applied, so a ToolError here means nothing changed.
    if (err instanceof ToolError || err instanceof ChunkError)
      return `I could not do that: ${err.message}. Nothing was changed.`;
    throw err;
  }
}

/** A reply that ends the instruction without a change. */
class Refusal extends Error {}

function quote(text: string): string {
  return `"${text}"`;
}

function plural(count: number, one: string, many = `${one}s`): string {
  return `${count} ${count === 1 ? one : many}`;
}

// --- sections

interface ResolvedSection {
  headingChunkId: string;
  title: string;
  level: number;
  chunkIds: string[];
  note: string;
}

function normalizeTitle(text: string): string {
  const folded = text.replace(/\s+/g, " ").trim();
  // Trailing ":" and "." stripped by a loop: the regex /[:.]+$/ is quadratic on ":::…:x".
  let end = folded.length;
  while (end > 0 && (folded[end - 1] === ":" || folded[end - 1] === ".")) end--;
  return folded.slice(0, end).toLowerCase();
}

// "2.1 Pricing" and "IV. Pricing" match "Pricing" exactly: users name sections
// by their words, not their numbers.
const NUMBERING = /^(?:\d+(?:\.\d+)*\.?|[ivxlc]+\.|[a-z]\.|§\s*\d+(?:\.\d+)*)\s+/i;

function stripNumbering(title: string): string {
  return title.replace(NUMBERING, "");
}

/**
 * Finds the section a user named: case-insensitive exact title first (also ignoring
 * numbering like "2.1"), then a unique prefix match, then a unique contains match.
 * Throws Refusal with a helpful message when nothing or several sections match.
 */
async function resolveSection(editor: Editor, name: string): Promise<ResolvedSection> {
  const wanted = normalizeTitle(name);
  if (wanted === "") throw new Refusal("The section name is empty. Nothing was changed.");
  const headings = editor.outline().filter((entry) => entry.level > 0);
  const titles: string[] = [];
  for (const entry of headings) {
    titles.push(normalizeTitle(textOf(editor.doc.get(entry.chunkId).html)));
    await editor.tick();
  }

  const pick = (predicate: (title: string) => boolean): number[] =>
    titles.flatMap((title, i) => (predicate(title) ? [i] : []));
  let found = pick((title) => title === wanted);
  if (found.length === 0) found = pick((title) => stripNumbering(title) === wanted);
  const note = found.length > 1 ? ` (the first of ${found.length} sections with that title)` : "";
  if (found.length === 0) {
    for (const predicate of [
      (title: string) => title.startsWith(wanted) || stripNumbering(title).startsWith(wanted),
      (title: string) => title.includes(wanted),
    ]) {
      const matches = pick(predicate);
      if (matches.length === 1) {
        found = matches;
        break;
      }
      if (matches.length > 1) {
        const names = matches.slice(0, 6).map((i) => quote(textOf(editor.doc.get(headings[i].chunkId).html)));
        throw new Refusal(
          `${quote(name)} matches several sections (${names.join(", ")}); please use the full heading. Nothing was changed.`,
        );
      }
    }
  }
  if (found.length === 0) {
    const available = headings.slice(0, 12).map((entry) => quote(textOf(editor.doc.get(entry.chunkId).html)));
    const list =
      available.length === 0
        ? " The document has no headings."
        : ` Sections: ${available.join(", ")}${headings.length > available.length ? ", …" : ""}.`;
    throw new Refusal(`I could not find a section called ${quote(name)}, so nothing was changed.${list}`);
  }
  const heading = headings[found[0]];
  const html = editor.doc.get(heading.chunkId).html;
  const chunkIds = sectionSpan(editor.doc.chunks(), heading.chunkId);
  return { headingChunkId: heading.chunkId, title: textOf(html), level: heading.level, chunkIds, note };
}

async function withRefusal(run: () => Promise<string> | string): Promise<string> {
  try {
    return await run();
  } catch (err) {
    if (err instanceof Refusal) return err.message;
    throw err;
  }
}

// --- HTML helpers

function escapeHtml(text: string): string {
  return text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");
}

const START_TAG = /^\s*<([a-zA-Z][a-zA-Z0-9]*)\b((?:[^>"']|"[^"]*"|'[^']*')*)>/;

/** `class` and `style` attributes of a chunk's start tag, ready to paste into a new tag. */
function styleAttrs(html: string): string {
  const m = START_TAG.exec(html);
  if (!m) return "";
  const out: string[] = [];
  for (const attr of m[2].matchAll(/\s(class|style)\s*=\s*("[^"]*"|'[^']*')/gi)) out.push(` ${attr[1]}=${attr[2]}`);
  return out.join("");
}

function phraseTooLong(what: string): string {
  return `The ${what} is longer than ${MAX_PHRASE_CHARS.toLocaleString("en-US")} characters, so nothing was changed.`;
}

function tagOf(editor: Editor, chunkId: string): string {
  return editor.tag(chunkId);
}

// --- instructions

async function replaceEverywhere(
  editor: Editor,
  find: string,
  replacement: string,
  sectionName?: string,
): Promise<string> {
  return withRefusal(async () => {
    if (find === "") return "The text to replace is empty, so nothing was changed.";
    if (find.length > MAX_PHRASE_CHARS) return phraseTooLong("text to replace");
    if (find === replacement) return `${quote(find)} and ${quote(replacement)} are the same, so nothing was changed.`;
    let scope = editor.doc.chunks().map((chunk) => chunk.chunkId);
    let where = "";
    if (sectionName !== undefined) {
      const section = await resolveSection(editor, sectionName);
      scope = section.chunkIds;
      where = ` in section ${quote(section.title)}${section.note}`;
    }
    // Exact case first; only when that finds nothing is the match case-insensitive,
    // so "acme" still finds "Acme" but "Acme" never rewrites "ACME" as well.
    for (const caseSensitive of [true, false]) {
      const edits: { chunkId: string; html: string }[] = [];
      let count = 0;
      for (const chunkId of scope) {
        const html = editor.doc.get(chunkId).html;
        const result = replaceText(html, find, replacement, { caseSensitive });
        if (result.count > 0 && result.html !== html) {
          edits.push({ chunkId, html: result.html });
          count += result.count;
        }
        await editor.tick();
      }
      if (edits.length === 0) continue;
      for (const edit of edits) {
        editor.replace(edit.chunkId, edit.html, `Replaced ${quote(find)} with ${quote(replacement)}`);
        await editor.tick(false);
      }
      return `Replaced ${plural(count, "occurrence")} of ${quote(find)} with ${quote(replacement)}${where} (${plural(edits.length, "block")} changed).`;
    }
    return `I could not find ${quote(find)}${where}, so nothing was changed.`;
  });
}

async function renameHeading(editor: Editor, headingName: string, newTitle: string): Promise<string> {
  return withRefusal(async () => {
    let title = newTitle.replace(/\s+/g, " ").trim();
    if (title === "") return "The new heading is empty, so nothing was changed.";
    const section = await resolveSection(editor, headingName);
    const html = editor.doc.get(section.headingChunkId).html;
    const m = /^(\s*<(h[1-6])\b(?:[^>"']|"[^"]*"|'[^']*')*>)[\s\S]*(<\/\2\s*>\s*)$/i.exec(html);
    if (!m) return `The heading ${quote(section.title)} has markup I cannot edit safely, so nothing was changed.`;
    // "rename 'Pricing' to 'Fees'" on "2. Pricing" gives "2. Fees": the user named the
    // words, so the numbering stays unless either name spells a number itself.
    const numbering = NUMBERING.exec(section.title);
    if (numbering && !NUMBERING.test(headingName.trim()) && !NUMBERING.test(title)) title = `${numbering[0]}${title}`;
    if (section.title === title) return `The heading is already ${quote(section.title)}; nothing was changed.`;
    editor.replace(
      section.headingChunkId,
      `${m[1]}${escapeHtml(title)}${m[3]}`,
      `Renamed heading ${quote(section.title)} to ${quote(title)}`,
    );
    return `Renamed heading ${quote(section.title)} to ${quote(title)}${section.note}.`;
  });
}

async function deleteSection(editor: Editor, name: string): Promise<string> {
  return withRefusal(async () => {
    const section = await resolveSection(editor, name);
    for (const chunkId of section.chunkIds) editor.delete(chunkId, `Deleted with section ${quote(section.title)}`);
    return `Deleted section ${quote(section.title)}${section.note} (${plural(section.chunkIds.length, "block")}).`;
  });
}

async function deleteParagraph(editor: Editor, containing: string): Promise<string> {
  const wanted = containing.replace(/\s+/g, " ").trim().toLowerCase();
  if (wanted === "") return "The text to look for is empty, so nothing was changed.";
  // Headings are skipped: deleting one would silently merge two sections ("delete section" does that on purpose).
  const matches: OutlineEntry[] = [];
  for (const entry of editor.outline()) {
    if (entry.level !== 0) continue;
    if (textOf(editor.doc.get(entry.chunkId).html).toLowerCase().includes(wanted)) matches.push(entry);
    await editor.tick();
  }
  if (matches.length === 0)
    return `I could not find a paragraph containing ${quote(containing)}, so nothing was changed.`;
  const target = matches[0];
  const preview = textOf(editor.doc.get(target.chunkId).html);
  const shortPreview = preview.length > 60 ? `${preview.slice(0, 57).trimEnd()}…` : preview;
  editor.delete(
    target.chunkId,
    `Deleted the ${target.tag === "p" ? "paragraph" : target.tag} containing ${quote(containing)}`,
  );
  const more =
    matches.length > 1
      ? ` ${plural(matches.length - 1, "other block")} also contain${matches.length === 2 ? "s" : ""} that text and ${matches.length === 2 ? "was" : "were"} kept.`
      : "";
  return `Deleted the paragraph containing ${quote(containing)} (${quote(shortPreview)}).${more}`;
}

function paragraphAttrs(editor: Editor, chunkIds: string[]): string {
  const paragraph = chunkIds.find((id) => tagOf(editor, id) === "p");
  return paragraph === undefined ? "" : styleAttrs(editor.doc.get(paragraph).html);
}

async function addParagraph(editor: Editor, text: string, sectionName: string): Promise<string> {
  return withRefusal(async () => {
    if (text.trim() === "") return "The paragraph text is empty, so nothing was changed.";
    const section = await resolveSection(editor, sectionName);
    const last = section.chunkIds[section.chunkIds.length - 1];
    // Borrow the section's paragraph styling so the new text looks like its neighbours.
    const attrs = paragraphAttrs(editor, section.chunkIds);
    editor.insertAfter(
      last,
      `<p${attrs}>${escapeHtml(text.trim())}</p>`,
      `Added a paragraph to section ${quote(section.title)}`,
    );
    return `Added a paragraph at the end of section ${quote(section.title)}${section.note}.`;
  });
}

async function addSection(editor: Editor, title: string, anchorName: string, body?: string): Promise<string> {
  return withRefusal(async () => {
    if (title.trim() === "") return "The new section's title is empty, so nothing was changed.";
    const anchor = await resolveSection(editor, anchorName);
    const last = anchor.chunkIds[anchor.chunkIds.length - 1];
    const headingAttrs = styleAttrs(editor.doc.get(anchor.headingChunkId).html);
    const pAttrs = paragraphAttrs(editor, anchor.chunkIds);
    const cleanTitle = title.trim();
    const text = body?.trim() || `Write the ${cleanTitle} section here.`;
    const tag = `h${anchor.level}`;
    const headingId = editor.insertAfter(
      last,
      `<${tag}${headingAttrs}>${escapeHtml(cleanTitle)}</${tag}>`,
      `Added section ${quote(cleanTitle)} after ${quote(anchor.title)}`,
    );
    editor.insertAfter(
      headingId,
      `<p${pAttrs}>${escapeHtml(text)}</p>`,
      `Added the text of section ${quote(cleanTitle)}`,
    );
    return `Added section ${quote(cleanTitle)} after section ${quote(anchor.title)}${anchor.note}${body?.trim() ? " with your text" : " with a placeholder paragraph"}.`;
  });
}

async function addRow(
  editor: Editor,
  cells: string[],
  which: { index: number } | { section: string } | null,
): Promise<string> {
  return withRefusal(async () => {
    if (cells.every((cell) => cell === "")) return "The row is empty, so nothing was changed.";
    const isTable = (id: string): boolean => tagOf(editor, id) === "table" || /<table\b/i.test(editor.doc.get(id).html);
    const tables: string[] = [];
    for (const entry of editor.outline()) {
      if (isTable(entry.chunkId)) tables.push(entry.chunkId);
      await editor.tick();
    }
    if (tables.length === 0) return "The document has no tables, so nothing was changed.";
    let target: string;
    let label: string;
    if (which === null) {
      if (tables.length > 1) {
        return `The document has ${tables.length} tables; say which one, e.g. add row "…" to table 2. Nothing was changed.`;
      }
      target = tables[0];
      label = "the table";
    } else if ("index" in which) {
      const index = which.index === -1 ? tables.length : which.index;
      if (!Number.isInteger(index) || index < 1 || index > tables.length) {
        return `There is no table ${which.index}: the document has ${plural(tables.length, "table")}. Nothing was changed.`;
      }
      target = tables[index - 1];
      label = `table ${index}`;
    } else {
      const section = await resolveSection(editor, which.section);
      const inSection = section.chunkIds.filter(isTable);
      if (inSection.length === 0) return `Section ${quote(section.title)} has no table, so nothing was changed.`;
      target = inSection[0];
      label = `the ${inSection.length > 1 ? "first " : ""}table in section ${quote(section.title)}`;
    }
    const html = addTableRow(editor.doc.get(target).html, cells);
    editor.replace(target, html, `Added a row (${cells.join(" | ")})`);
    return `Added a row with ${plural(cells.length, "cell")} to ${label}.`;
  });
}

async function formatPhrase(editor: Editor, phrase: string, tag: "strong" | "em"): Promise<string> {
  if (phrase.trim() === "") return "The phrase is empty, so nothing was changed.";
  if (phrase.length > MAX_PHRASE_CHARS) return phraseTooLong("phrase");
  const style = tag === "strong" ? "bold" : "italic";
  // Same case rule as replace: exact case first, case-insensitive only as a fallback.
  for (const caseSensitive of [true, false]) {
    const edits: { chunkId: string; html: string }[] = [];
    let count = 0;
    for (const chunk of editor.doc.chunks()) {
      const result = wrapPhrase(chunk.html, phrase, tag, { caseSensitive });
      if (result.count > 0 && result.html !== chunk.html) {
        edits.push({ chunkId: chunk.chunkId, html: result.html });
        count += result.count;
      }
      await editor.tick();
    }
    if (edits.length === 0) continue;
    for (const edit of edits) {
      editor.replace(edit.chunkId, edit.html, `Made ${quote(phrase)} ${style}`);
      await editor.tick(false);
    }
    return `Made ${plural(count, "occurrence")} of ${quote(phrase)} ${style} (${plural(edits.length, "block")} changed).`;
  }
  return `I could not find ${quote(phrase)} outside text that is already ${style}, so nothing was changed.`;
}

/**
 * Longest section text "show section" replies with, in characters, per response mode. In compact
 * mode the reply is the only place the client gets the content (no document comes back), so a
 * whole long section fits; in full mode the client gets (or can fetch) the document's HTML.
 */
const SHOW_LIMITS = { full: 20_000, compact: 200_000 } as const;

/** Plain-text rendering of one chunk for `show section`: headings as #, tables as rows, lists as items. */
function renderChunk(html: string, tag: string, level: number): string {
  if (level > 0) return `${"#".repeat(level)} ${textOf(html)}`;
  if (tag === "table" || /<table\b/i.test(html)) {
    // Splitting at each row/cell start keeps text in document order without a DOM.
    return html
      .split(/<tr\b/i)
      .slice(1)
      .map((row) =>
        row
          .split(/<t[dh]\b/i)
          .slice(1)
          .map((cell) => textOf(`<td${cell}`))
          .join(" | "),
      )
      .filter((row) => row.trim() !== "")
      .join("\n");
  }
  if (tag === "ul" || tag === "ol") {
    return html
      .split(/<li\b/i)
      .slice(1)
      .map((item, i) => `${tag === "ol" ? `${i + 1}.` : "-"} ${textOf(`<li${item}`)}`)
      .join("\n");
  }
  return textOf(html);
}

async function showSection(editor: Editor, name: string, limit: number): Promise<string> {
  return withRefusal(async () => {
    const section = await resolveSection(editor, name);
    const entries = new Map(editor.outline().map((entry) => [entry.chunkId, entry]));
    // Rendering stops once past the limit: the cut text is the same, a huge section costs no more.
    const parts: string[] = [];
    let length = 0;
    for (const id of section.chunkIds) {
      if (length > limit) break;
      const entry = entries.get(id);
      const text = renderChunk(editor.doc.get(id).html, entry?.tag ?? "", entry?.level ?? 0);
      if (text !== "") {
        length += (parts.length > 0 ? 2 : 0) + text.length;
        parts.push(text);
      }
      await editor.tick();
    }
    let body = parts.join("\n\n");
    if (body.length > limit) body = `${body.slice(0, limit)}\n… (cut at ${limit} characters)`;
    return `Here is section ${quote(section.title)}${section.note} (${plural(section.chunkIds.length, "block")}); nothing was changed.\n\n${body}`;
  });
}

// --- draft outline

type OutlineTemplate = { match: RegExp; sections: [string, string][] };

// Section plans by the kind of document the topic names; "{t}" becomes the topic.
const OUTLINE_TEMPLATES: OutlineTemplate[] = [
  {
    match: /\b(proposal|pitch|bid|rfp)\b/i,
    sections: [
      ["Summary", "Summarize what {t} proposes and why it matters."],
      ["Problem", "Describe the problem or opportunity {t} addresses."],
      ["Proposed solution", "Explain the approach and what will be delivered."],
      ["Timeline", "List the main phases and dates."],
      ["Budget", "Give the costs and what they cover."],
      ["Next steps", "Say what decision or action is needed next."],
    ],
  },
  {
    match: /\b(report|analysis|review|study|assessment|findings)\b/i,
    sections: [
      ["Executive summary", "Summarize the key findings of {t} in a few sentences."],
      ["Background", "Explain the context and the questions {t} answers."],
      ["Findings", "Present the main findings with supporting evidence."],
      ["Recommendations", "List the recommended actions."],
      ["Conclusion", "Close with the main takeaway."],
    ],
  },
  {
    match: /\b(plan|roadmap|strategy|launch)\b/i,
    sections: [
      ["Goals", "State what {t} aims to achieve."],
      ["Current situation", "Describe where things stand today."],
      ["Approach", "Explain how the goals will be reached."],
      ["Milestones", "List the milestones and their dates."],
      ["Risks", "Name the main risks and how to handle them."],
      ["Measuring success", "Define how progress will be measured."],
    ],
  },
  {
    match: /\b(guide|tutorial|how to|how-to|manual|handbook|instructions)\b/i,
    sections: [
      ["Overview", "Explain what {t} covers and who it is for."],
      ["Before you start", "List what the reader needs first."],
      ["Steps", "Walk through the steps in order."],
      ["Troubleshooting", "Cover common problems and their fixes."],
      ["Further reading", "Point to related resources."],
    ],
  },
  {
    match: /\b(policy|procedure|agreement|contract|terms|guidelines)\b/i,
    sections: [
      ["Purpose", "State why {t} exists."],
      ["Scope", "Say who and what it applies to."],
      ["Definitions", "Define the key terms."],
      ["Rules", "Set out the rules or obligations."],
      ["Responsibilities", "Say who is responsible for what."],
    ],
  },
];

const DEFAULT_OUTLINE: [string, string][] = [
  ["Introduction", "Introduce {t} and why it matters."],
  ["Background", "Give the context a reader needs."],
  ["Key points", "Cover the main points about {t}."],
  ["Discussion", "Discuss implications, trade-offs or open questions."],
  ["Conclusion", "Summarize and say what comes next."],
];

function draftOutline(editor: Editor, topic: string): string {
  if (!editor.doc.isEmpty()) {
    return "The document already has content, so I did not draft an outline; drafting only works in an empty document.";
  }
  if (topic === "") return 'Tell me the topic, e.g. draft an outline for "Quarterly report". Nothing was changed.';
  const sections = OUTLINE_TEMPLATES.find((template) => template.match.test(topic))?.sections ?? DEFAULT_OUTLINE;
  let last = editor.insertAfter(null, `<h1>${escapeHtml(topic)}</h1>`, `Drafted outline title ${quote(topic)}`);
  for (const [heading, hint] of sections) {
    last = editor.insertAfter(last, `<h2>${escapeHtml(heading)}</h2>`, `Drafted outline section ${quote(heading)}`);
    last = editor.insertAfter(
      last,
      `<p>${escapeHtml(hint.replaceAll("{t}", topic))}</p>`,
      `Drafted placeholder text for ${quote(heading)}`,
    );
  }
  return `Drafted an outline for ${quote(topic)}: a title and ${sections.length} sections (${sections.map(([h]) => h).join(", ")}), each with a placeholder paragraph.`;
}
