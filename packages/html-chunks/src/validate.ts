import { chunkElements, finalizeChunk, hasBlockChild, isBlank, policePart } from "./chunk-html.js";
import { findImbalance, isTag, isText, parseHtml } from "./dom.js";
import { ChunkError } from "./errors.js";
import { isValidChunkId, mintChunkId } from "./ids.js";
import { type RemoteImages, sanitizeHtml } from "./sanitize.js";
import { CHUNK_TAGS, LOOSE_ITEM_CONTAINER, WRAPPER_TAGS } from "./tags.js";
import type { ChunkRecord } from "./types.js";

/**
 * Validates and normalizes the HTML of ONE chunk (e.g. an agent's replacement).
 *
 * The input must be exactly one block element (surrounding whitespace allowed)
 * of a chunk tag (h1-h6, p, ul, ol, dl, table, blockquote, pre, hr, figure, or
 * a container such as div/section holding only inline content). It is
 * sanitized, descendants lose `data-chunk-id`, and the element's
 * `data-chunk-id` is set to `chunkId` when given, else kept when valid, else
 * minted. The result is what chunkHtml would produce for it (a fixed point).
 *
 * @returns the normalized outer HTML.
 * @throws ChunkError `empty` (blank, or nothing left after sanitizing),
 *   `malformed_html` (unbalanced or misnested tags), `not_one_block` (plain
 *   text, several top-level elements, an inline element such as <span>, or a
 *   container holding several blocks), `invalid_argument` (bad chunkId).
 */
export function validateChunkHtml(html: string, chunkId?: string, opts: ParseChunkOptions = {}): string {
  return parseChunk(html, chunkId, opts).html;
}

/** Options of parseChunk/validateChunkHtml. */
export interface ParseChunkOptions {
  /**
   * When present, the only `data-part` the chunk may carry (null: none, e.g. a new chunk);
   * any other part mark is removed. Absent: part marks are kept.
   */
  part?: string | null;
  /** Remote and relative `<img>` sources kept (default) or dropped (REMOTE_IMAGES=drop). */
  remoteImages?: RemoteImages;
}

/** validateChunkHtml returning the chunk record (id and normalized HTML); same rules and errors. */
export function parseChunk(html: string, chunkId?: string, opts: ParseChunkOptions = {}): ChunkRecord {
  if (chunkId !== undefined && !isValidChunkId(chunkId)) {
    throw new ChunkError("invalid_argument", `invalid chunk id "${chunkId}"`);
  }
  if (typeof html !== "string" || html.trim() === "") throw new ChunkError("empty", "chunk HTML is empty");
  const imbalance = findImbalance(html);
  if (imbalance) throw new ChunkError("malformed_html", `malformed HTML: ${imbalance}`);

  const top = singleTopElement(sanitizeHtml(html, { remoteImages: opts.remoteImages }));
  const existing = top.attribs["data-chunk-id"];
  const id = chunkId ?? (existing !== undefined && isValidChunkId(existing) ? existing : mintChunkId());
  if (opts.part !== undefined) policePart(top, opts.part ?? undefined);
  return finalizeChunk(top, id);
}

// Parses sanitized HTML and returns its only top-level element, checking that
// chunkHtml would treat it as exactly one chunk.
function singleTopElement(clean: string) {
  const nodes = parseHtml(clean).children.filter((n) => !(isText(n) && !/[^ \t\n\r\f]/.test(n.data)));
  if (nodes.length === 0) throw new ChunkError("empty", "nothing is left after sanitizing the chunk HTML");
  if (nodes.length > 1) {
    throw new ChunkError("not_one_block", `expected one block element, found ${nodes.length} top-level nodes`);
  }
  const top = nodes[0];
  if (!isTag(top)) throw new ChunkError("not_one_block", "plain text is not a chunk: wrap it in <p>");
  if (!CHUNK_TAGS.has(top.name)) {
    const hint = top.name in LOOSE_ITEM_CONTAINER ? `<${LOOSE_ITEM_CONTAINER[top.name]}>` : "<p>";
    throw new ChunkError("not_one_block", `<${top.name}> cannot stand alone as a chunk: wrap it in ${hint}`);
  }
  if (WRAPPER_TAGS.has(top.name) && hasBlockChild(top)) {
    throw new ChunkError("not_one_block", `<${top.name}> holds several blocks: insert them as separate chunks`);
  }
  if (WRAPPER_TAGS.has(top.name) && isBlank(top)) throw new ChunkError("empty", `<${top.name}> is empty`);
  return top;
}

/**
 * Chunks agent-supplied HTML holding one or more blocks, for insertion.
 * Existing `data-chunk-id`s are ignored: `mint` supplies every id.
 * @throws ChunkError `empty` or `malformed_html`.
 */
export function chunkFragment(html: string, mint: () => string): ChunkRecord[] {
  if (typeof html !== "string" || html.trim() === "") throw new ChunkError("empty", "HTML to insert is empty");
  const imbalance = findImbalance(html);
  if (imbalance) throw new ChunkError("malformed_html", `malformed HTML: ${imbalance}`);
  const elements = chunkElements(html, true);
  if (elements.length === 0) throw new ChunkError("empty", "nothing is left after sanitizing the HTML to insert");
  return elements.map((el) => finalizeChunk(el, mint()));
}
