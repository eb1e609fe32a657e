// An ordered list of chunks with O(1) lookup, insert-after and delete: a
// doubly linked list keyed by chunk id. Shared by WorkingDocument and
// applyOperations so neither re-scans or re-parses the document per edit.
import type { ChunkRecord } from "./types.js";

interface Node {
  html: string;
  prev: string | null;
  next: string | null;
}

export class ChunkList {
  private readonly nodes = new Map<string, Node>();
  private head: string | null = null;
  private tail: string | null = null;

  /** Builds the list; returns the first duplicated id instead of throwing, so callers pick the error type. */
  static from(chunks: ChunkRecord[]): ChunkList | { duplicate: string } {
    const list = new ChunkList();
    for (const c of chunks) {
      if (list.has(c.chunkId)) return { duplicate: c.chunkId };
      list.insertAfter(list.tail, c.chunkId, c.html);
    }
    return list;
  }

  get size(): number {
    return this.nodes.size;
  }

  has(id: string): boolean {
    return this.nodes.has(id);
  }

  /** HTML of a chunk, or undefined when absent. */
  html(id: string): string | undefined {
    return this.nodes.get(id)?.html;
  }

  setHtml(id: string, html: string): void {
    const node = this.nodes.get(id);
    if (node) node.html = html;
  }

  /** Id of the chunk before `id` (null at the start). */
  prevOf(id: string): string | null {
    return this.nodes.get(id)?.prev ?? null;
  }

  /** Links a new chunk after `after` (null: at the start). Caller checks id is new and anchor exists. */
  insertAfter(after: string | null, id: string, html: string): void {
    const next = after === null ? this.head : (this.nodes.get(after)?.next ?? null);
    this.nodes.set(id, { html, prev: after, next });
    if (after === null) this.head = id;
    else this.link(after).next = id;
    if (next === null) this.tail = id;
    else this.link(next).prev = id;
  }

  remove(id: string): void {
    const node = this.nodes.get(id);
    if (!node) return;
    if (node.prev === null) this.head = node.next;
    else this.link(node.prev).next = node.next;
    if (node.next === null) this.tail = node.prev;
    else this.link(node.next).prev = node.prev;
    this.nodes.delete(id);
  }

  /** Chunks in order, as fresh records. */
  toArray(): ChunkRecord[] {
    const out: ChunkRecord[] = [];
    for (let id = this.head; id !== null; ) {
      const node = this.link(id);
      out.push({ chunkId: id, html: node.html });
      id = node.next;
    }
    return out;
  }

  private link(id: string): Node {
    const node = this.nodes.get(id);
    if (!node) throw new Error(`chunk list is corrupt: missing ${id}`);
    return node;
  }
}
