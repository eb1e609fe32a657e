// From a converter's source blocks (HTML of one block of the original + where it sits) to the
// HTML the documents service will store, with a chunk id on every chunk and the map from those
// ids to the blocks. Format-agnostic: markdown, text and docx converters all go through here.
import { chunkHtml, type PartPolicy, seededChunkIds } from "@redline/html-chunks";
import type { SourceFormat, SourceMap, SourceSpan } from "./types.js";

/** One block of the original file: its HTML (any number of chunks, even none) and its span. */
export interface SourceBlock {
  html: string;
  span: SourceSpan;
}

/**
 * Chunks each block as the documents service chunks a load (sanitized, the same rules), so the
 * returned `html` stores as exactly these chunks with exactly these ids. Ids are minted from
 * `seed` (e.g. the file's sha256): the same file always converts to the same ids, so an agent
 * job rerun stores and edits the ids its first run did. Ids an author wrote into the file are
 * never kept. A block that makes several chunks maps each of them to its span (a group the
 * exporter writes back whole or re-serializes whole); a block that makes none is left to the
 * bytes between chunks.
 */
export function chunkSourceBlocks(
  blocks: SourceBlock[],
  format: SourceFormat,
  seed: string,
  parts: PartPolicy = "drop",
): { html: string; map: SourceMap } {
  const mintId = seededChunkIds(`source:${seed}`);
  const noIds = new Set<string>();
  const html: string[] = [];
  const chunks: Record<string, SourceSpan> = {};
  for (const block of blocks) {
    for (const chunk of chunkHtml(block.html, { knownIds: noIds, parts, mintId }).chunks) {
      // seededChunkIds is collision-free in practice; a repeat would break the map, so mint on.
      if (Object.hasOwn(chunks, chunk.chunkId)) throw new Error("source chunk id collision");
      chunks[chunk.chunkId] = block.span;
      html.push(chunk.html);
    }
  }
  return { html: html.join("\n"), map: { format, chunks } };
}
