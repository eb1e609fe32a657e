// Export to .docx in place (docx-in-place.ts): edits of the notes lists written into the notes
// parts (word/footnotes.xml, endnotes.xml), and the edits of passages that have no block of
// their own (text boxes) written into the body blocks that hold them.
import { partOf } from "@redline/html-chunks";
import { noteReferenceRun, noteStarts } from "../docx/notes.js";
import { elementEnd } from "../docx/source-map.js";
import { escapeXml } from "../docx/xml.js";
import { loadHtml } from "../html/util.js";
import type { DocumentSource } from "../sources/types.js";
import { blockSpecs, type Chunk, chunkElement, isElement, type Node, type ParaSpec } from "./docx-in-place-html.js";
import type { InPlacePackage } from "./docx-in-place-package.js";
import { editNestedParagraph } from "./docx-in-place-rewrite.js";
import { type BlockWriter, rewriteTextParagraphs } from "./docx-in-place-writer.js";

type NoteKind = "footnote" | "endnote";

/**
 * Writes `edits` (changed chunks that came from the file without a block of their own) where
 * they live: a notes list into its notes part (editNotes; references the body renamed follow),
 * a text box's paragraph into `body` (editNestedParagraph). Then drops the note references the
 * edit added that name no note, and warns of what could not be written.
 */
export async function writeUnmappedEdits(
  doc: InPlacePackage,
  body: string[],
  edits: Chunk[],
  source: DocumentSource,
): Promise<void> {
  const { writer } = doc;
  let changedUnmapped = 0;
  // References the edit added, by kind: they name notes the notes parts must then hold.
  const addedRefs = { footnote: [] as string[], endnote: [] as string[] };
  for (const ref of writer.newNoteRefs) {
    const [kind, id] = ref.split(":");
    if (kind === "footnote" || kind === "endnote") addedRefs[kind].push(id);
  }
  const notesParts = new Map<NoteKind, string | undefined>();
  const notesPart = async (kind: NoteKind) => {
    const target = [...doc.rels.values()].find((r) => r.type.endsWith(`/${kind}s`))?.target;
    if (!notesParts.has(kind)) notesParts.set(kind, target ? await doc.read(target) : undefined);
    return { target, xml: notesParts.get(kind) };
  };
  for (const chunk of edits) {
    const kind = partOf(chunk.html);
    if (kind === "footnote" || kind === "endnote") {
      const { target, xml } = await notesPart(kind);
      if (!target || xml === undefined) {
        changedUnmapped++;
        continue;
      }
      const inBody = new Set(
        [...body.join("").matchAll(new RegExp(`<w:${kind}Reference\\b[^>]*?\\sw:id="([^"]*)"`, "g"))].map((m) => m[1]),
      );
      let notes: ReturnType<typeof editNotes> | undefined;
      const notesXml = await doc.inPart(target, () => {
        notes = editNotes(
          writer,
          kind,
          xml,
          chunk.html,
          source.loaded[chunk.chunkId],
          new Set(addedRefs[kind]),
          inBody,
        );
        return notes.xml;
      });
      const { unwritten, renamed } = notes as ReturnType<typeof editNotes>;
      changedUnmapped += unwritten;
      for (const [from, to] of renamed) {
        const was = noteReferenceRun(kind, from);
        for (let i = 0; i < body.length; i++)
          if (body[i].includes(was)) body[i] = body[i].split(was).join(noteReferenceRun(kind, to));
        addedRefs[kind] = addedRefs[kind].map((id) => (id === from ? to : id));
      }
      notesParts.set(kind, notesXml);
      if (notesXml !== xml) {
        doc.zip.file(target, notesXml);
        doc.rewrittenParts++;
      }
    } else if (!editNestedParagraph(writer, body, chunk.html, source.loaded[chunk.chunkId])) changedUnmapped++;
  }
  let dangling = 0;
  for (const kind of ["footnote", "endnote"] as const)
    if (addedRefs[kind].length > 0)
      dangling += dropDanglingNoteRefs(body, kind, addedRefs[kind], (await notesPart(kind)).xml);
  if (changedUnmapped > 0)
    doc.warnings.push(
      `${changedUnmapped} edited passages (text boxes, notes) could not be written into the original file and keep their original text`,
    );
  if (dangling > 0)
    doc.warnings.push(`${dangling} note references added in an edit name no note of the file and were left out`);
}

/** The items of a notes list chunk (`<li id="footnote-N">`) by Word note id, their back links removed. */
function noteItems(html: string | undefined, kind: string): Map<string, string> {
  const out = new Map<string, string>();
  const el = html ? chunkElement(html) : null;
  if (!el) return out;
  for (const li of (el.children as Node[]).filter(isElement)) {
    const id = new RegExp(`^${kind}-(.+)$`).exec(li.attribs.id ?? "")?.[1];
    if (id === undefined) continue;
    const $ = loadHtml(loadHtml("").html(li));
    // Compared, not put in a selector: the id is the document's text and may hold quotes or brackets.
    const backLink = `#${kind}-ref-${id}`;
    $("a")
      .filter((_, a) => $(a).attr("href") === backLink)
      .remove();
    out.set(id, $("li").first().html() ?? "");
  }
  return out;
}

/** How a new note looks: its paragraphs' properties and the run of its number mark. */
interface NoteShape {
  pPr: string;
  mark: string;
}

/**
 * The shape of the part's last real note (separators apart), so a new note takes the document's
 * own note style; Word's default note styles when the part has no note to copy.
 */
function noteShape(xml: string, kind: string, starts: Map<string, number>): NoteShape {
  const shape = {
    pPr: `<w:pPr><w:pStyle w:val="${kind === "footnote" ? "FootnoteText" : "EndnoteText"}"/></w:pPr>`,
    mark: `<w:r><w:rPr><w:rStyle w:val="${kind === "footnote" ? "FootnoteReference" : "EndnoteReference"}"/></w:rPr><w:${kind}Ref/></w:r>`,
  };
  const ats = [...starts.values()];
  for (let k = ats.length - 1; k >= 0; k--) {
    const note = xml.slice(ats[k], elementEnd(xml, ats[k]));
    if (/^<w:\w+\b[^>]*\sw:type="/.test(note) || !note.includes(`<w:${kind}Ref/>`)) continue;
    shape.pPr = /<w:pPr>[\s\S]*?<\/w:pPr>|<w:pPr\/>/.exec(note)?.[0] ?? shape.pPr;
    const ref = note.indexOf(`<w:${kind}Ref/>`);
    const runStart = Math.max(note.lastIndexOf("<w:r>", ref), note.lastIndexOf("<w:r ", ref));
    const runEnd = note.indexOf("</w:r>", ref);
    if (runStart >= 0 && runEnd >= 0) shape.mark = note.slice(runStart, runEnd + "</w:r>".length);
    break;
  }
  return shape;
}

/** A new note's element holding `lines`: `shape`'s properties on every paragraph, its number mark first. */
function newNoteElement(writer: BlockWriter, kind: string, id: string, lines: ParaSpec[], shape: NoteShape): string {
  // Word separates the mark from the text by a space, unless the mark's run ends in a tab.
  const gap = shape.mark.includes("<w:tab/>") ? "" : '<w:r><w:t xml:space="preserve"> </w:t></w:r>';
  const paragraphs = writer
    .blocks(lines, [], false, false)
    .map(
      (p, i) =>
        `<w:p>${shape.pPr}${i === 0 ? shape.mark + gap : ""}${p.replace(/^<w:p\b[^>]*>(?:<w:pPr>[\s\S]*?<\/w:pPr>|<w:pPr\/>)?/, "")}`,
    );
  return `<w:${kind} w:id="${id}">${paragraphs.join("")}</w:${kind}>`;
}

/**
 * The notes part (`word/footnotes.xml`, `endnotes.xml`) after the edit of its notes list:
 * - a changed item's note gets its text rewritten in place (number mark, anchors and paragraph
 *   properties kept);
 * - an added item that the body refers to (`referenced`, the references the edit added) becomes a
 *   new note, shaped like the part's notes. Its id is the item's when that is a free Word id (a
 *   decimal number), else the next free one, and `renamed` maps the item's id to it so the
 *   caller rewrites the reference;
 * - a removed item's note leaves the part once no reference in the body (`inBody`, ids as written
 *   in the XML) names it.
 * Items that cannot be written this way (added with no reference, removed while still referred
 * to, not found) count as `unwritten`.
 */
function editNotes(
  writer: BlockWriter,
  kind: "footnote" | "endnote",
  xml: string,
  html: string,
  loaded: string | undefined,
  referenced: Set<string>,
  inBody: Set<string>,
): { xml: string; unwritten: number; renamed: Map<string, string> } {
  const now = noteItems(html, kind);
  const before = noteItems(loaded, kind);
  const renamed = new Map<string, string>();
  const linesOf = (item: string) => {
    const li = chunkElement(`<li>${item}</li>`);
    return li ? blockSpecs(li, {}).filter((b): b is ParaSpec => b.kind === "p") : [];
  };
  let unwritten = 0;
  // Removals and rewrites, applied from the part's end back, so the offsets found first stay valid.
  const starts = noteStarts(xml, kind);
  const changes: { at: number; lines?: ParaSpec[] }[] = [];
  for (const id of before.keys()) {
    if (now.has(id)) continue;
    const at = starts.get(id);
    if (at === undefined || inBody.has(escapeXml(id))) unwritten++;
    else changes.push({ at });
  }
  const added: [string, ParaSpec[]][] = [];
  for (const [id, item] of now) {
    const was = before.get(id);
    if (was === item) continue;
    const lines = linesOf(item);
    if (was === undefined) {
      if (referenced.has(id) && lines.length > 0) added.push([id, lines]);
      else unwritten++;
      continue;
    }
    const at = starts.get(id);
    if (at === undefined || lines.length === 0) unwritten++;
    else changes.push({ at, lines });
  }
  let out = xml;
  for (const { at, lines } of changes.sort((a, b) => b.at - a.at))
    out = lines ? rewriteTextParagraphs(out, at, lines, writer) : out.slice(0, at) + out.slice(elementEnd(out, at));
  // Additions go at the part's end, each with a free Word id.
  const close = out.lastIndexOf(`</w:${kind}s>`);
  if (added.length > 0 && close < 0) unwritten += added.length;
  else if (added.length > 0) {
    const ids = noteStarts(out, kind);
    const shape = noteShape(out, kind, ids);
    const taken = new Set(ids.keys());
    let next = Math.max(0, ...[...taken].map(Number).filter(Number.isInteger)) + 1;
    const notes: string[] = [];
    for (const [id, lines] of added) {
      let wordId = id;
      if (!/^\d{1,9}$/.test(id) || taken.has(id)) {
        while (taken.has(String(next))) next++;
        wordId = String(next);
        renamed.set(id, wordId);
      }
      taken.add(wordId);
      notes.push(newNoteElement(writer, kind, wordId, lines, shape));
    }
    out = out.slice(0, close) + notes.join("") + out.slice(close);
  }
  return { xml: out, unwritten, renamed };
}

/**
 * Drops from `blocks` every reference the edit added to a note of `kind` that `part` (the notes
 * part as written, undefined when the file has none) does not hold: Word refuses to open a file
 * whose reference names no note. Returns how many it dropped.
 */
function dropDanglingNoteRefs(blocks: string[], kind: string, added: string[], part: string | undefined): number {
  // Separators (w:type) are notes of the part too, but no reference may name one.
  const held = new Set<string>();
  for (const [id, at] of part === undefined ? [] : noteStarts(part, kind))
    if (!/\sw:type="/.test(part?.slice(at, part.indexOf(">", at)) ?? "")) held.add(id);
  let dropped = 0;
  for (const id of added) {
    if (held.has(id)) continue;
    const run = noteReferenceRun(kind, id);
    for (let i = 0; i < blocks.length; i++) {
      if (!blocks[i].includes(run)) continue;
      dropped += blocks[i].split(run).length - 1;
      blocks[i] = blocks[i].split(run).join("");
    }
  }
  return dropped;
}
