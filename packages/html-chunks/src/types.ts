// Shapes shared by the chunk model, the documents service and the agent's engines.

/** One chunk: a block element carrying `data-chunk-id`, as outer HTML. */
export interface ChunkRecord {
  chunkId: string;
  html: string;
}

/** One net edit of a document, as committed by the documents service. */
export type ChunkOperation =
  | { kind: "replace"; chunkId: string; html: string; explanation: string }
  | { kind: "insert"; chunkId: string; afterChunkId: string | null; html: string; explanation: string }
  | { kind: "delete"; chunkId: string; explanation: string };

/** One entry of a document outline: every chunk, with headings marked by level. */
export interface OutlineEntry {
  chunkId: string;
  /** Lower-case tag name of the chunk element (h1, p, table, ul...). */
  tag: string;
  /** 1..6 for headings, 0 for other blocks. */
  level: number;
  /** Plain text, whitespace folded, cut to a short preview. */
  preview: string;
}

/**
 * A heading-anchored section: the heading chunk and the chunks up to the next
 * heading of ANY level, i.e. without its subsections, so every chunk belongs to
 * exactly one (the innermost) section. sectionSpan() gives the heading with its
 * subsections (up to the next heading of the same or higher level).
 */
export interface Section {
  /** Heading chunk id; null for the leading content before the first heading. */
  headingChunkId: string | null;
  /** Heading level 1..6; 0 for the leading content. */
  level: number;
  /** Heading text ("" for the leading content). */
  title: string;
  /** Chunk ids in document order, heading first. */
  chunkIds: string[];
}
