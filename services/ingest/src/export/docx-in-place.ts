// Export to .docx by writing the uploaded package back with only what changed regenerated
// (issue #12, edit in place). Untouched chunks are written as their original body blocks, byte
// for byte; so are the blocks no chunk came from (empty paragraphs, drawings' anchors), the
// final w:sectPr and every other part (styles, numbering, settings, media, fields, equations).
// A changed paragraph keeps its w:pPr (style, numbering, section break), its first run's
// formatting and its bookmarks, comment ranges, note references, drawings and equations at
// their place in the text; a deleted chunk's section break is kept on an empty paragraph.
// Edited headers, footers, comments and notes rewrite their own parts the same way; notes added
// or removed with their references are added to or removed from the notes part. What the
// upload carried that would harm whoever opens the export is cleaned on the way: unsafe entry
// names (docx-package-names.ts) and external relationships Word would fetch or that point at
// local files (docx-package-links.ts); only the parts that had something to clean change.
// The work is split by concern: the HTML side (docx-in-place-html.ts), the XML writer
// (docx-in-place-writer.ts), the body (docx-in-place-body.ts, changed chunks rewritten by
// docx-in-place-rewrite.ts), notes and text boxes (docx-in-place-notes.ts), headers, footers and
// comments (docx-in-place-parts.ts) and the package itself (docx-in-place-package.ts).
import { chunkHtml } from "@redline/html-chunks";
import JSZip from "jszip";
import { bodyLayout } from "../docx/source-map.js";
import type { DocumentSource, SourceMap } from "../sources/types.js";
import { dropOrphanAnchors, writeBody, writeMainPart } from "./docx-in-place-body.js";
import { untouchedIn } from "./docx-in-place-html.js";
import { writeUnmappedEdits } from "./docx-in-place-notes.js";
import { InPlacePackage, mainPartName } from "./docx-in-place-package.js";
import { writeComments, writeHeadersAndFooters } from "./docx-in-place-parts.js";
import type { ImageLookup, PageRequest } from "./docx-package.js";

/** What an in-place export produced. */
export interface InPlaceResult {
  bytes: Buffer;
  warnings: string[];
  /** Chunk id → its blocks in the OUTPUT word/document.xml (what tracked changes are written against). */
  map: SourceMap;
}

/** What an in-place export may add beyond the edited text. */
export interface InPlaceOptions {
  /** Bytes of the pictures an edit added (`<img src>`: data: URLs and stored images). */
  images?: ImageLookup;
  /**
   * The page the export asks for (its options, else the document's page setup); what differs
   * from the original's own page is written into every section.
   */
  page?: PageRequest;
  /** A text watermark on every page (opacity 0..1), as the generated export writes it. */
  watermark?: { text: string; opacity: number };
}

/**
 * Writes `html` (the document's current chunks) into the original package of `source`: see the
 * file comment. Returns the package, the losses worth telling the caller about and where each
 * chunk's blocks are in the output document.xml. Throws when the original is not a readable
 * .docx (the caller then falls back to a generated export).
 */
export async function writeDocxInPlace(
  html: string,
  source: DocumentSource,
  options: InPlaceOptions = {},
): Promise<InPlaceResult> {
  const doc = await InPlacePackage.open(source.bytes, options.images);
  const { chunks } = chunkHtml(html, { sanitize: false });
  const untouched = untouchedIn(source);
  const body = writeBody(doc, chunks, source, untouched);
  await writeUnmappedEdits(doc, body.blocks, body.unmapped, source);
  await writeHeadersAndFooters(doc, chunks, source, untouched);
  const removedComments = await writeComments(doc, chunks, source, untouched);
  const blocks = dropOrphanAnchors(body.blocks, body.original, removedComments);
  const mainXml = await writeMainPart(doc, blocks, body.original, options);
  const bytes = await doc.finish(mainXml);
  return { bytes, warnings: doc.warnings, map: body.map };
}

/** The body's block-level children (w:sectPr apart) of a package's main document part, as XML. */
export async function documentBlocks(bytes: Buffer): Promise<string[]> {
  const zip = await JSZip.loadAsync(bytes);
  const xml = (await zip.file(mainPartName(await zip.file("_rels/.rels")?.async("string")))?.async("string")) ?? "";
  return bodyLayout(xml).blocks.map((b) => xml.slice(b.start, b.end));
}
