import { textOf } from "./dom.js";
import { ChunkError } from "./errors.js";
import type { ChunkRecord, OutlineEntry, Section } from "./types.js";

export { textOf };

/** What the outline functions need to know about one chunk. */
export interface ChunkInfo {
  chunkId: string;
  /** Lower-case tag of the chunk element. */
  tag: string;
  /** 1..6 for h1..h6, 0 otherwise. */
  level: number;
  /** Full plain text, whitespace folded. */
  text: string;
}

const OPENING_TAG = /^\s*<([a-zA-Z][a-zA-Z0-9-]*)/;

/** Lower-case tag name of a chunk's element, read from its opening tag ("" if none). */
export function tagOf(html: string): string {
  const match = OPENING_TAG.exec(html);
  return match ? match[1].toLowerCase() : "";
}

/** Heading level of a tag: 1..6 for h1..h6, 0 otherwise. */
export function headingLevel(tag: string): number {
  return /^h[1-6]$/.test(tag) ? Number(tag[1]) : 0;
}

/** Computes tag, level and text of a chunk (parses its HTML once). */
export function describeChunk(chunk: ChunkRecord): ChunkInfo {
  const tag = tagOf(chunk.html);
  return { chunkId: chunk.chunkId, tag, level: headingLevel(tag), text: textOf(chunk.html) };
}

/** Cuts text to at most `max` chars, ending with "…" when cut. */
export function preview(text: string, max: number): string {
  if (text.length <= max) return text;
  if (max <= 1) return text.slice(0, Math.max(0, max));
  return `${text.slice(0, max - 1).trimEnd()}…`;
}

/**
 * Outline of a document: one entry per chunk, in order, with tag, heading
 * level (0 for non-headings) and a plain-text preview of at most
 * `previewChars` characters (default 80; "…" marks a cut).
 */
export function outline(chunks: ChunkRecord[], opts: { previewChars?: number } = {}): OutlineEntry[] {
  return outlineOf(chunks.map(describeChunk), opts.previewChars ?? 80);
}

/** outline() over pre-computed chunk infos (lets WorkingDocument reuse a cache). */
export function outlineOf(infos: ChunkInfo[], previewChars: number): OutlineEntry[] {
  return infos.map((i) => ({ chunkId: i.chunkId, tag: i.tag, level: i.level, preview: preview(i.text, previewChars) }));
}

/**
 * Heading-anchored sections of a document, in order.
 *
 * Choice: a section's `chunkIds` are its heading plus the chunks up to (not
 * including) the next heading of ANY level, so every chunk belongs to exactly
 * one section, the innermost one. Use sectionSpan() for a heading together
 * with its subsections (up to the next heading of the same or higher level).
 * Content before the first heading forms a leading section with
 * `headingChunkId` null, level 0 and title ""; it is omitted when empty.
 */
export function sections(chunks: ChunkRecord[]): Section[] {
  return sectionsOf(chunks.map(describeChunk));
}

/** sections() over pre-computed chunk infos. */
export function sectionsOf(infos: ChunkInfo[]): Section[] {
  const out: Section[] = [];
  let current: Section = { headingChunkId: null, level: 0, title: "", chunkIds: [] };
  for (const info of infos) {
    if (info.level > 0) {
      if (current.headingChunkId !== null || current.chunkIds.length > 0) out.push(current);
      current = { headingChunkId: info.chunkId, level: info.level, title: info.text, chunkIds: [info.chunkId] };
    } else {
      current.chunkIds.push(info.chunkId);
    }
  }
  if (current.headingChunkId !== null || current.chunkIds.length > 0) out.push(current);
  return out;
}

/** Number of entries sections() returns (heading sections plus a non-empty leading section). */
export function countSections(chunks: ChunkRecord[]): number {
  return sections(chunks).length;
}

/**
 * A heading chunk and everything after it up to (not including) the next
 * heading of the same or higher level (level <= its own), i.e. the section
 * with all its subsections: what "delete this section" removes.
 * @returns chunk ids in document order, heading first.
 * @throws ChunkError `unknown_chunk` if absent, `not_heading` if not a heading.
 */
export function sectionSpan(chunks: ChunkRecord[], headingChunkId: string): string[] {
  return sectionSpanOf(
    chunks.map((c) => ({ chunkId: c.chunkId, level: headingLevel(tagOf(c.html)) })),
    headingChunkId,
  );
}

/** sectionSpan() over (chunkId, level) pairs. */
export function sectionSpanOf(infos: { chunkId: string; level: number }[], headingChunkId: string): string[] {
  const start = infos.findIndex((i) => i.chunkId === headingChunkId);
  if (start < 0) throw new ChunkError("unknown_chunk", `unknown chunk "${headingChunkId}"`);
  const level = infos[start].level;
  if (level === 0) throw new ChunkError("not_heading", `chunk "${headingChunkId}" is not a heading`);
  const span = [headingChunkId];
  for (let i = start + 1; i < infos.length; i++) {
    if (infos[i].level > 0 && infos[i].level <= level) break;
    span.push(infos[i].chunkId);
  }
  return span;
}
