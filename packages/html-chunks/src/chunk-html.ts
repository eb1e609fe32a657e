import { isCDATA, isComment, isDirective } from "domhandler";
import {
  type ChildNode,
  Element,
  isTag,
  isText,
  type ParentNode,
  parseHtml,
  relinkChildren,
  serialize,
  stripNestedChunkIds,
} from "./dom.js";
import { isValidChunkId, mintUniqueId } from "./ids.js";
import { type RemoteImages, sanitizeHtml } from "./sanitize.js";
import {
  ALWAYS_UNWRAP_TAGS,
  ATOMIC_BLOCK_TAGS,
  BLOCK_LEVEL_TAGS,
  DROPPED_TAGS,
  LOOSE_ITEM_CONTAINER,
  WRAPPER_TAGS,
} from "./tags.js";
import type { ChunkRecord } from "./types.js";

/** Options of chunkHtml. */
export interface ChunkHtmlOptions {
  /** Run sanitizeHtml first (default true). Pass false only for HTML this package produced. */
  sanitize?: boolean;
  /** With sanitizing: remote and relative `<img>` sources kept (default) or dropped (REMOTE_IMAGES=drop). */
  remoteImages?: RemoteImages;
  /**
   * The ids an incoming `data-chunk-id` may take (a save: the chunks of the document it edits);
   * any other id is re-minted. Default: any well-formed id.
   */
  knownIds?: ReadonlySet<string>;
  /**
   * Out-of-flow part marks (`data-part`) allowed on chunks: "keep" all (default: HTML from our
   * converters or our own store), "drop" all (HTML a caller wrote), or a map from chunk id to
   * the part that chunk already carries (a save: a chunk keeps only the part it had).
   */
  parts?: PartPolicy;
  /** Source of fresh ids (default random); `seededChunkIds(seed)` makes a chunking reproducible. */
  mintId?: () => string;
}

/** See ChunkHtmlOptions.parts. */
export type PartPolicy = "keep" | "drop" | ReadonlyMap<string, string>;

/**
 * Splits an HTML document into its flat, ordered list of chunks.
 *
 * Rules: headings, p, lists, dl, table, blockquote, pre, hr and figure are one
 * chunk each, whatever they contain (a whole ul/ol or table is one chunk).
 * Container elements (div, section, article, main, header, footer, nav, aside,
 * center, ...) are unwrapped when they hold block children, their children
 * being chunked recursively; a container with only inline content is one chunk;
 * an empty container is dropped. html/body/head and stray table parts are
 * unwrapped; head, style, script and comments are dropped. Consecutive loose
 * inline content (text, spans, links, images, br) is wrapped into one <p>;
 * stray <li>/<dt>/<dd> are regrouped into a <ul>/<dl>.
 *
 * Ids: a chunk keeps its `data-chunk-id` when valid and not already used by an
 * earlier chunk; otherwise a fresh id is minted. The id is written as the
 * element's first attribute (others keep their order); descendants lose theirs.
 * The result is a fixed point: chunkHtml(result.html) returns the same chunks.
 *
 * @returns chunks in document order and `html`, their outer HTML joined by "\n".
 */
export function chunkHtml(html: string, opts: ChunkHtmlOptions = {}): { chunks: ChunkRecord[]; html: string } {
  const elements = chunkElements(html, opts.sanitize !== false, opts.remoteImages);
  const taken = reserveExistingIds(elements);
  const seen = new Set<string>();
  const parts = opts.parts ?? "keep";
  const chunks = elements.map((el) => {
    const existing = el.attribs["data-chunk-id"];
    const keep =
      existing !== undefined &&
      isValidChunkId(existing) &&
      !seen.has(existing) &&
      (opts.knownIds === undefined || opts.knownIds.has(existing));
    const id = keep ? existing : mintUniqueId(taken, opts.mintId);
    seen.add(id);
    if (parts !== "keep") policePart(el, parts === "drop" ? undefined : parts.get(id));
    return finalizeChunk(el, id);
  });
  return { chunks, html: chunks.map((c) => c.html).join("\n") };
}

/** Parses (and optionally sanitizes) HTML and returns its chunk elements, ids not yet assigned. */
export function chunkElements(html: string, sanitize: boolean, remoteImages?: RemoteImages): Element[] {
  const doc = parseHtml(sanitize ? sanitizeHtml(html, { remoteImages }) : html);
  // sanitize-html already removed comments and non-content elements everywhere.
  if (!sanitize) removeNonContent(doc);
  const out: Element[] = [];
  collect(doc.children, out);
  return out;
}

// Attributes that only mean something on an out-of-flow part, removed with `data-part`.
const PART_ATTRIBUTES = ["data-part", "data-variant", "data-comment-id", "data-author"];

/**
 * Removes the chunk element's out-of-flow mark unless it is exactly `allowed`: a block cannot
 * become a header, footer, note list or comment it was not already.
 */
export function policePart(el: Element, allowed: string | undefined): void {
  const part = el.attribs["data-part"];
  if (part === undefined || part === allowed) return;
  for (const name of PART_ATTRIBUTES) delete el.attribs[name];
}

/**
 * The `data-part` of a chunk's element (undefined when it is in the flow). Reads only the
 * opening tag of canonical chunk HTML (as finalizeChunk writes it), so it is cheap.
 */
export function partOf(html: string): string | undefined {
  const open = /^<[A-Za-z][^\s/>]*([^>]*)>/.exec(html);
  const found = open ? /\sdata-part="([^"]*)"/.exec(open[1]) : null;
  return found ? found[1] : undefined;
}

/**
 * Stamps `id` on the chunk element, strips nested ids and part marks (a part is a whole chunk;
 * exporters find parts by `[data-part]` anywhere) and serializes it.
 */
export function finalizeChunk(el: Element, id: string): ChunkRecord {
  stripNestedChunkIds(el);
  // The id always comes first, other attributes keep their order: one
  // canonical form, so re-submitting a chunk with or without its id (or with
  // the id elsewhere) yields the same bytes.
  const { "data-chunk-id": _old, ...rest } = el.attribs;
  el.attribs = { "data-chunk-id": id, ...rest };
  return { chunkId: id, html: serialize(el) };
}

/** True when a container's children include block-level elements (so it is unwrapped). */
export function hasBlockChild(el: ParentNode): boolean {
  return el.children.some((c) => isTag(c) && BLOCK_LEVEL_TAGS.has(c.name));
}

/** True when an element has no children other than whitespace text. */
export function isBlank(el: ParentNode): boolean {
  return el.children.every((c) => isText(c) && !/[^ \t\n\r\f]/.test(c.data));
}

// Ids present on chunk elements are reserved up front so a freshly minted id
// can never collide with an id kept further down the document.
function reserveExistingIds(elements: Element[]): Set<string> {
  const taken = new Set<string>();
  for (const el of elements) {
    const id = el.attribs["data-chunk-id"];
    if (id !== undefined) taken.add(id);
  }
  return taken;
}

type RunKind = "inline" | "li" | "dl";

// Walks sibling nodes, emitting chunk elements into `out`. Loose inline nodes
// (and stray list items) accumulate in a run that is wrapped when it ends.
function collect(nodes: ChildNode[], out: Element[]): void {
  let run: ChildNode[] = [];
  let runKind: RunKind = "inline";
  const flush = () => {
    const wrapped = wrapRun(run, runKind);
    if (wrapped) out.push(wrapped);
    run = [];
  };
  for (const node of nodes) {
    if (!isTag(node)) {
      if (!isText(node)) continue;
      // Whitespace between blocks is layout only; inside a run it is kept.
      const blank = !/[^ \t\n\r\f]/.test(node.data);
      if (blank && run.length > 0) run.push(node);
      else if (!blank) {
        if (runKind !== "inline") flush();
        runKind = "inline";
        run.push(node);
      }
      continue;
    }
    const kind = runKindOf(node);
    if (kind) {
      if (kind !== runKind) flush();
      runKind = kind;
      run.push(node);
      continue;
    }
    flush();
    emitBlock(node, out);
  }
  flush();
}

function runKindOf(el: Element): RunKind | null {
  if (el.name in LOOSE_ITEM_CONTAINER) return el.name === "li" ? "li" : "dl";
  if (BLOCK_LEVEL_TAGS.has(el.name) || DROPPED_TAGS.has(el.name)) return null;
  return "inline";
}

function emitBlock(el: Element, out: Element[]): void {
  if (DROPPED_TAGS.has(el.name)) return;
  if (ATOMIC_BLOCK_TAGS.has(el.name)) {
    out.push(el);
  } else if (ALWAYS_UNWRAP_TAGS.has(el.name) || hasBlockChild(el)) {
    collect(el.children, out);
  } else if (WRAPPER_TAGS.has(el.name) && !isBlank(el)) {
    out.push(el);
  }
}

// Wraps a run into <p> (inline), <ul> (stray li) or <dl> (stray dt/dd).
// Whitespace at the edges of an inline run is trimmed; a blank run yields nothing.
function wrapRun(run: ChildNode[], kind: RunKind): Element | null {
  if (run.length === 0) return null;
  if (kind === "inline") {
    trimRunEdges(run);
    run = run.filter((n) => !(isText(n) && n.data === ""));
    if (run.length === 0) return null;
  }
  const wrapper = new Element(kind === "inline" ? "p" : kind === "li" ? "ul" : "dl", {}, run);
  relinkChildren(wrapper);
  return wrapper;
}

function trimRunEdges(run: ChildNode[]): void {
  const first = run[0];
  if (isText(first)) first.data = first.data.replace(/^[ \t\n\r\f]+/, "");
  const last = run[run.length - 1];
  if (isText(last)) last.data = last.data.replace(/[ \t\n\r\f]+$/, "");
}

// For unsanitized input: drop comments, doctype, CDATA and non-content elements
// anywhere in the tree, so they never end up inside a chunk.
function removeNonContent(parent: ParentNode): void {
  // Most nodes have nothing to remove: only rebuild the array when needed.
  if (parent.children.some(isNonContent)) {
    parent.children = parent.children.filter((c) => !isNonContent(c));
    relinkChildren(parent);
  }
  for (const child of parent.children) if (isTag(child) && child.children.length > 0) removeNonContent(child);
}

function isNonContent(node: ChildNode): boolean {
  return isComment(node) || isDirective(node) || isCDATA(node) || (isTag(node) && DROPPED_TAGS.has(node.name));
}
