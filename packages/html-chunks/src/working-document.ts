import { applyOperations } from "./apply-operations.js";
import { chunkHtml } from "./chunk-html.js";
import { ChunkList } from "./chunk-list.js";
import { foldWhitespace } from "./dom.js";
import { ChunkError, ToolError } from "./errors.js";
import { mintUniqueId } from "./ids.js";
import { type ChunkInfo, describeChunk, outlineOf, sectionSpanOf, sectionsOf } from "./outline.js";
import type { ChunkOperation, ChunkRecord, OutlineEntry, Section } from "./types.js";
import { chunkFragment, validateChunkHtml } from "./validate.js";

/** One search hit: the chunk and ~80 chars of its text around the first match. */
export interface SearchHit {
  chunkId: string;
  snippet: string;
}

const SNIPPET_CHARS = 80;
const DEFAULT_SEARCH_LIMIT = 20;

/**
 * A document being edited in memory by the agent's tools.
 *
 * Every mutating method validates first and throws ToolError (with `code`)
 * without changing anything when the edit is invalid. Lookups and edits are
 * O(1) (linked list + maps); listing is O(n). Chunks never touched keep their
 * HTML byte for byte. operations() gives the net edit relative to the base.
 */
export class WorkingDocument {
  private readonly base: ChunkRecord[];
  private readonly baseHtml = new Map<string, string>();
  private readonly list: ChunkList;
  /** Chunks inserted by this session and still present. */
  private readonly inserted = new Set<string>();
  /** Base chunks deleted by this session. */
  private readonly deletedBase = new Set<string>();
  /** Explanation of the last operation on each changed chunk. */
  private readonly explanations = new Map<string, string>();
  /** Every id ever seen here, so a minted id is never reused. */
  private readonly usedIds = new Set<string>();
  /** Text/tag per chunk id, valid while the stored html is unchanged. */
  private readonly infoCache = new Map<string, { html: string; info: ChunkInfo }>();

  /**
   * @param chunks the base document (copied; normally from chunkHtml or storage).
   * @throws ChunkError `duplicate_chunk` when two chunks share an id.
   */
  constructor(chunks: ChunkRecord[]) {
    this.base = chunks.map((c) => ({ chunkId: c.chunkId, html: c.html }));
    const list = ChunkList.from(this.base);
    if (!(list instanceof ChunkList)) {
      throw new ChunkError("duplicate_chunk", `duplicate chunk id "${list.duplicate}"`);
    }
    this.list = list;
    for (const c of this.base) {
      this.baseHtml.set(c.chunkId, c.html);
      this.usedIds.add(c.chunkId);
    }
  }

  /** Chunks (sanitizing) an HTML document and starts editing it. */
  static fromHtml(html: string): WorkingDocument {
    return new WorkingDocument(chunkHtml(html).chunks);
  }

  /** Pure: see applyOperations(). applyOperations(base, wd.operations()) deep-equals wd.chunks(). */
  static applyOperations(base: ChunkRecord[], ops: ChunkOperation[]): ChunkRecord[] {
    return applyOperations(base, ops);
  }

  /** Current chunks in document order (fresh records). */
  chunks(): ChunkRecord[] {
    return this.list.toArray();
  }

  /** @throws ToolError `unknown_chunk`. */
  get(chunkId: string): ChunkRecord {
    const html = this.list.html(chunkId);
    if (html === undefined) throw unknownChunk(chunkId);
    return { chunkId, html };
  }

  has(chunkId: string): boolean {
    return this.list.has(chunkId);
  }

  isEmpty(): boolean {
    return this.list.size === 0;
  }

  /** Outline of the current document; see outline(). */
  outline(previewChars = 80): OutlineEntry[] {
    return outlineOf(this.infos(), previewChars);
  }

  /** Sections of the current document; see sections() for the chosen semantics. */
  sections(): Section[] {
    return sectionsOf(this.infos());
  }

  /**
   * Heading plus its subsections; see sectionSpan().
   * @throws ToolError `unknown_chunk` / `not_heading`.
   */
  sectionSpan(headingChunkId: string): string[] {
    if (!this.has(headingChunkId)) throw unknownChunk(headingChunkId);
    return asToolError(() => sectionSpanOf(this.infos(), headingChunkId));
  }

  /**
   * The requested chunks, in the order asked.
   * @throws ToolError `unknown_chunk` naming the first unknown id.
   */
  read(chunkIds: string[]): ChunkRecord[] {
    const missing = chunkIds.find((id) => !this.has(id));
    if (missing !== undefined) throw unknownChunk(missing);
    return chunkIds.map((id) => this.get(id));
  }

  /**
   * Case-insensitive (by default) substring search over each chunk's plain
   * text, whitespace folded in text and query. At most `limit` hits (default
   * 20), in document order, each with a snippet of ~80 chars around the first
   * match ("…" marks cuts).
   * @throws ToolError `invalid_argument` for a blank query or a bad limit.
   */
  search(query: string, opts: { limit?: number; caseSensitive?: boolean } = {}): SearchHit[] {
    const needle = typeof query === "string" ? foldWhitespace(query) : "";
    if (needle === "") throw new ToolError("invalid_argument", "search query is empty");
    const limit = opts.limit ?? DEFAULT_SEARCH_LIMIT;
    if (!Number.isInteger(limit) || limit < 1)
      throw new ToolError("invalid_argument", "limit must be a positive integer");
    const pattern = new RegExp(escapeRegExp(needle), opts.caseSensitive ? "" : "i");
    const hits: SearchHit[] = [];
    for (const info of this.infos()) {
      const match = pattern.exec(info.text);
      if (match) hits.push({ chunkId: info.chunkId, snippet: snippetAround(info.text, match.index, needle.length) });
      if (hits.length >= limit) break;
    }
    return hits;
  }

  /**
   * Replaces a chunk's HTML (one block; see validateChunkHtml), keeping its id.
   * Identical resulting HTML is a no-op and records nothing.
   * @returns the chunk as stored. @throws ToolError (`unknown_chunk`, HTML codes).
   */
  replace(chunkId: string, html: string, explanation: string): ChunkRecord {
    checkExplanation(explanation);
    const current = this.list.html(chunkId);
    if (current === undefined) throw unknownChunk(chunkId);
    const next = asToolError(() => validateChunkHtml(html, chunkId));
    if (next === current) return { chunkId, html: current };
    this.list.setHtml(chunkId, next);
    this.explanations.set(chunkId, explanation);
    return { chunkId, html: next };
  }

  /**
   * Inserts one or several blocks after `afterChunkId` (null: at the start).
   * The HTML is sanitized and chunked like chunkHtml; every new chunk gets a
   * freshly minted id (ids in the HTML are ignored, never reused).
   * @returns the inserted chunks in order.
   * @throws ToolError `unknown_chunk` (anchor), `empty`, `malformed_html`.
   */
  insertAfter(afterChunkId: string | null, html: string, explanation: string): ChunkRecord[] {
    checkExplanation(explanation);
    if (afterChunkId !== null && !this.has(afterChunkId)) throw unknownChunk(afterChunkId);
    const records = asToolError(() => chunkFragment(html, () => mintUniqueId(this.usedIds)));
    let anchor = afterChunkId;
    for (const rec of records) {
      this.list.insertAfter(anchor, rec.chunkId, rec.html);
      this.inserted.add(rec.chunkId);
      this.explanations.set(rec.chunkId, explanation);
      anchor = rec.chunkId;
    }
    return records;
  }

  /** Deletes a chunk. @throws ToolError `unknown_chunk`. */
  delete(chunkId: string, explanation: string): void {
    checkExplanation(explanation);
    if (!this.has(chunkId)) throw unknownChunk(chunkId);
    this.list.remove(chunkId);
    this.infoCache.delete(chunkId);
    if (this.inserted.delete(chunkId)) {
      // Inserted then deleted: nothing to commit for it.
      this.explanations.delete(chunkId);
    } else {
      this.deletedBase.add(chunkId);
      this.explanations.set(chunkId, explanation);
    }
  }

  /**
   * Net operations relative to the base, in document order, ready to commit:
   * insert (final HTML, anchored on the chunk before it in the final order, so
   * anchors always exist when applied in order), replace (only when the final
   * HTML differs from the base), delete (base chunks gone). Each carries the
   * explanation of the last operation on its chunk. Inserted-then-deleted
   * chunks and edits reverted to the base HTML produce nothing.
   */
  operations(): ChunkOperation[] {
    const ops: ChunkOperation[] = [];
    let baseIndex = 0;
    // Emits deletes for base chunks up to (not including) `stopId`, or all remaining.
    const deletesUntil = (stopId: string | null) => {
      while (baseIndex < this.base.length && this.base[baseIndex].chunkId !== stopId) {
        const id = this.base[baseIndex++].chunkId;
        if (this.deletedBase.has(id)) ops.push({ kind: "delete", chunkId: id, explanation: this.explain(id) });
      }
    };
    let prev: string | null = null;
    for (const chunk of this.list.toArray()) {
      const id = chunk.chunkId;
      if (this.inserted.has(id)) {
        ops.push({ kind: "insert", chunkId: id, afterChunkId: prev, html: chunk.html, explanation: this.explain(id) });
      } else {
        deletesUntil(id);
        baseIndex++;
        if (chunk.html !== this.baseHtml.get(id)) {
          ops.push({ kind: "replace", chunkId: id, html: chunk.html, explanation: this.explain(id) });
        }
      }
      prev = id;
    }
    deletesUntil(null);
    return ops;
  }

  /** Ids touched by operations(), in the same order (inserted, replaced, deleted). */
  changedChunkIds(): string[] {
    return this.operations().map((op) => op.chunkId);
  }

  /** Current document: chunk HTML joined with "\n". */
  toHtml(): string {
    return this.list
      .toArray()
      .map((c) => c.html)
      .join("\n");
  }

  private explain(id: string): string {
    return this.explanations.get(id) ?? "";
  }

  // Chunk infos in document order, parsing only chunks whose HTML changed.
  private infos(): ChunkInfo[] {
    return this.list.toArray().map((chunk) => {
      const cached = this.infoCache.get(chunk.chunkId);
      if (cached && cached.html === chunk.html) return cached.info;
      const info = describeChunk(chunk);
      this.infoCache.set(chunk.chunkId, { html: chunk.html, info });
      return info;
    });
  }
}

function unknownChunk(id: string): ToolError {
  return new ToolError("unknown_chunk", `unknown chunk "${id}"`);
}

function checkExplanation(explanation: unknown): void {
  if (typeof explanation !== "string") throw new ToolError("invalid_argument", "explanation must be a string");
}

// Runs a pure chunk function, re-labelling its ChunkError as a ToolError.
function asToolError<T>(fn: () => T): T {
  try {
    return fn();
  } catch (err) {
    throw ToolError.from(err);
  }
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

function snippetAround(text: string, index: number, length: number): string {
  const width = Math.max(SNIPPET_CHARS, length);
  let start = Math.max(0, index - Math.floor((width - length) / 2));
  const end = Math.min(text.length, start + width);
  start = Math.max(0, end - width);
  return `${start > 0 ? "…" : ""}${text.slice(start, end)}${end < text.length ? "…" : ""}`;
}
