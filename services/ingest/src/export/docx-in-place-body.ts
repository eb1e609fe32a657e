// Export to .docx in place (docx-in-place.ts): the body. Each in-flow chunk is written where its
// original blocks were: an untouched one as those blocks byte for byte, a changed one rewritten
// (docx-in-place-rewrite.ts); blocks no chunk came from stay; a deleted chunk leaves only its
// section break; a content control is never rewritten whole (docx-in-place-containers.ts). Then
// the main part is put together with the page and watermark asked for.
import { partOf } from "@redline/html-chunks";
import { docxPageSetup } from "../docx/page-setup.js";
import type { DocumentSource, SourceMap, SourceSpan } from "../sources/types.js";
import { isContainer, rewriteInContainer } from "./docx-in-place-containers.js";
import type { Chunk, Untouched } from "./docx-in-place-html.js";
import type { InPlacePackage } from "./docx-in-place-package.js";
import { rewriteChunk } from "./docx-in-place-rewrite.js";
import { sectPrOf } from "./docx-in-place-writer.js";
import { addWatermark, applyPageRequest, type PageRequest, pageChanges } from "./docx-package.js";

/** The body as written. */
export interface WrittenBody {
  /** Its block-level children (w:sectPr apart), in order. */
  blocks: string[];
  /** The original body's blocks. */
  original: string[];
  /** Chunk id → its blocks in `blocks`. */
  map: SourceMap;
  /** Changed chunks that came from the file without a block of their own (a text box's text, the notes list). */
  unmapped: Chunk[];
}

/** The body's blocks for `chunks` (the document's current chunks, in order): see the file comment. */
export function writeBody(
  doc: InPlacePackage,
  chunks: Chunk[],
  source: DocumentSource,
  untouched: Untouched,
): WrittenBody {
  const { documentXml, layout, writer } = doc;
  const origBlocks = layout.blocks.map((b) => documentXml.slice(b.start, b.end));
  // Which original block belongs to which chunk (unowned blocks are written back as they are).
  const owner = new Array<string | null>(origBlocks.length).fill(null);
  for (const [id, span] of Object.entries(source.map.chunks)) {
    if (span.kind !== "block") continue;
    for (let i = span.index; i < span.index + (span.count ?? 1) && i < owner.length; i++) owner[i] = id;
  }
  const current = new Set(chunks.map((c) => c.chunkId));
  const out: string[] = [];
  const outMap: SourceMap = { format: "docx", chunks: {} };
  const emitted = new Set<number>();
  let next = 0;
  const unmappedEdits: Chunk[] = [];
  const warn = (message: string) => doc.warnings.push(message);
  // Blocks of deleted chunks: only a section break survives, on an empty paragraph.
  const emitOriginal = (i: number) => {
    if (emitted.has(i)) return;
    emitted.add(i);
    const id = owner[i];
    if (id === null || current.has(id)) out.push(origBlocks[i]);
    else if (isContainer(origBlocks[i])) {
      // A content control holds other chunks' paragraphs too: only the deleted one goes.
      out.push(...rewriteInContainer(writer, [origBlocks[i]], null, source.loaded[id], warn));
    } else {
      const sect = sectPrOf(origBlocks[i]);
      if (sect && origBlocks[i].startsWith("<w:p")) out.push(`<w:p><w:pPr>${sect}</w:pPr></w:p>`);
    }
  };
  const emitUpTo = (end: number) => {
    for (; next < end; next++) if (owner[next] === null || !current.has(owner[next] as string)) emitOriginal(next);
  };

  for (const chunk of chunks) {
    const part = partOf(chunk.html);
    if (part === "header" || part === "footer" || part === "comment") continue;
    const span = source.map.chunks[chunk.chunkId] as SourceSpan | undefined;
    let startOut = out.length;
    if (span?.kind === "block" && span.index < origBlocks.length) {
      const count = Math.min(span.count ?? 1, origBlocks.length - span.index);
      if (span.index >= next) emitUpTo(span.index);
      startOut = out.length;
      const own = [...Array(count).keys()].map((k) => span.index + k).filter((i) => owner[i] === chunk.chunkId);
      if (untouched(chunk.chunkId, chunk.html)) {
        for (const i of own) {
          emitted.add(i);
          out.push(origBlocks[i]);
        }
      } else if (own.some((i) => isContainer(origBlocks[i]))) {
        for (const i of own) emitted.add(i);
        const orig = own.map((i) => origBlocks[i]);
        out.push(...rewriteInContainer(writer, orig, chunk.html, source.loaded[chunk.chunkId], warn));
      } else {
        for (const i of own) emitted.add(i);
        out.push(
          ...rewriteChunk(
            writer,
            chunk.html,
            source.loaded[chunk.chunkId],
            own.map((i) => origBlocks[i]),
          ),
        );
      }
      next = Math.max(next, span.index + count);
    } else if (source.loaded[chunk.chunkId] !== undefined) {
      // Came from the file without a block of its own (a text box's text, the notes list): its
      // content lives in blocks written back as they are.
      if (!untouched(chunk.chunkId, chunk.html)) unmappedEdits.push(chunk);
      continue;
    } else {
      out.push(...rewriteChunk(writer, chunk.html, undefined, []));
    }
    if (out.length > startOut) {
      const count = out.length - startOut;
      outMap.chunks[chunk.chunkId] =
        count > 1 ? { kind: "block", index: startOut, count } : { kind: "block", index: startOut };
    }
  }
  emitUpTo(origBlocks.length);
  return { blocks: out, original: origBlocks, map: outMap, unmapped: unmappedEdits };
}

/** Comment and bookmark ids whose anchors are incomplete in `blocks` (a half or the reference gone). */
function orphanIds(blocks: string[]): { comments: Set<string>; bookmarks: Set<string> } {
  const joined = blocks.join("");
  const ids = (re: RegExp) => new Set([...joined.matchAll(re)].map((m) => m[1]));
  const starts = ids(/<w:commentRangeStart\b[^>]*w:id="([^"]*)"/g);
  const ends = ids(/<w:commentRangeEnd\b[^>]*w:id="([^"]*)"/g);
  const refs = ids(/<w:commentReference\b[^>]*w:id="([^"]*)"/g);
  const bStarts = ids(/<w:bookmarkStart\b[^>]*w:id="([^"]*)"/g);
  const bEnds = ids(/<w:bookmarkEnd\b[^>]*w:id="([^"]*)"/g);
  const all = new Set([...starts, ...ends, ...refs]);
  return {
    comments: new Set([...all].filter((id) => !refs.has(id) || starts.has(id) !== ends.has(id))),
    bookmarks: new Set([...bStarts, ...bEnds].filter((id) => bStarts.has(id) !== bEnds.has(id))),
  };
}

/**
 * Drops the comment anchors and bookmark halves an edit orphaned (a deleted block held the other
 * half or the reference), and every anchor of `removedComments`. Orphans the original already
 * had are left as they were.
 */
export function dropOrphanAnchors(blocks: string[], original: string[], removedComments: Set<string>): string[] {
  const before = orphanIds(original);
  const after = orphanIds(blocks);
  const comments = new Set([...after.comments].filter((id) => !before.comments.has(id)));
  for (const id of removedComments) comments.add(id);
  const bookmarks = new Set([...after.bookmarks].filter((id) => !before.bookmarks.has(id)));
  if (comments.size === 0 && bookmarks.size === 0) return blocks;
  return blocks.map((b) =>
    b
      .replace(/<w:comment(?:RangeStart|RangeEnd)\b[^>]*w:id="([^"]*)"[^>]*\/>/g, (m, id: string) =>
        comments.has(id) ? "" : m,
      )
      .replace(
        /<w:r(?:\s[^>]*)?>(?:(?!<\/w:r>)[\s\S])*?<w:commentReference\b[^>]*w:id="([^"]*)"[\s\S]*?<\/w:r>/g,
        (m, id: string) => (comments.has(id) ? "" : m),
      )
      .replace(/<w:bookmark(?:Start|End)\b[^>]*w:id="([^"]*)"[^>]*\/>/g, (m, id: string) =>
        bookmarks.has(id) ? "" : m,
      ),
  );
}

/**
 * The main part with `body` as its body (the uploaded part itself when no block changed; the
 * gap between blocks of a pretty-printed original is reused), the pictures the edit added
 * embedded, and the page and watermark asked for.
 */
export async function writeMainPart(
  doc: InPlacePackage,
  body: string[],
  original: string[],
  options: { page?: PageRequest; watermark?: { text: string; opacity: number } },
): Promise<string> {
  const { documentXml, layout } = doc;
  const sectPr = layout.sectPr ? documentXml.slice(layout.sectPr.start, layout.sectPr.end) : "";
  const unchanged = body.length === original.length && body.every((b, i) => b === original[i]);
  // Pretty-printed originals keep their layout: the gap between blocks is reused.
  const first = layout.blocks[0];
  const lastBlock = layout.blocks[layout.blocks.length - 1];
  const gap = layout.blocks.length > 1 ? documentXml.slice(first.end, layout.blocks[1].start) : "";
  let newDocument = unchanged
    ? documentXml
    : documentXml.slice(0, first ? first.start : layout.contentStart) +
      body.join(/^\s*$/.test(gap) ? gap : "") +
      (lastBlock ? documentXml.slice(lastBlock.end, layout.contentEnd) : sectPr) +
      documentXml.slice(layout.contentEnd);
  newDocument = await doc.finishPart(doc.mainRels, newDocument);
  if (options.page) newDocument = applyPageRequest(newDocument, pageChanges(options.page, docxPageSetup(documentXml)));
  if (options.watermark?.text) {
    newDocument = await addWatermark(doc.zip, doc.mainRels, newDocument, options.watermark);
    doc.rewrittenParts++;
  }
  return newDocument;
}
