import { ChunkList } from "./chunk-list.js";
import { ChunkError } from "./errors.js";
import type { ChunkOperation, ChunkRecord } from "./types.js";
import { validateChunkHtml } from "./validate.js";

/**
 * Applies net operations to a base chunk list, in order, and returns the new
 * list (inputs are not mutated). Replace/insert HTML is re-validated with
 * validateChunkHtml and its data-chunk-id forced to the op's chunkId; an
 * insert goes right after `afterChunkId` (null: at the start), which must
 * exist at that point. O(n + ops).
 *
 * @throws ChunkError `duplicate_chunk` (base has a duplicate id, or an insert
 *   reuses a present id), `unknown_chunk` (replace/delete target or insert
 *   anchor absent), `malformed_html` / `not_one_block` / `empty` (bad HTML),
 *   `invalid_operation` (unknown kind).
 */
export function applyOperations(base: ChunkRecord[], ops: ChunkOperation[]): ChunkRecord[] {
  const list = ChunkList.from(base);
  if (!(list instanceof ChunkList)) {
    throw new ChunkError("duplicate_chunk", `base has duplicate chunk id "${list.duplicate}"`);
  }
  for (const [index, op] of ops.entries()) applyOne(list, op, index);
  return list.toArray();
}

function applyOne(list: ChunkList, op: ChunkOperation, index: number): void {
  const where = `operation ${index} (${op.kind} ${op.chunkId})`;
  switch (op.kind) {
    case "replace":
      if (!list.has(op.chunkId)) throw new ChunkError("unknown_chunk", `${where}: unknown chunk`);
      list.setHtml(op.chunkId, validated(op.html, op.chunkId, where));
      return;
    case "insert":
      if (list.has(op.chunkId)) throw new ChunkError("duplicate_chunk", `${where}: chunk id already present`);
      if (op.afterChunkId !== null && !list.has(op.afterChunkId)) {
        throw new ChunkError("unknown_chunk", `${where}: unknown anchor "${op.afterChunkId}"`);
      }
      list.insertAfter(op.afterChunkId, op.chunkId, validated(op.html, op.chunkId, where));
      return;
    case "delete":
      if (!list.has(op.chunkId)) throw new ChunkError("unknown_chunk", `${where}: unknown chunk`);
      list.remove(op.chunkId);
      return;
    default:
      throw new ChunkError("invalid_operation", `operation ${index}: unknown kind "${(op as { kind: unknown }).kind}"`);
  }
}

function validated(html: string, chunkId: string, where: string): string {
  try {
    return validateChunkHtml(html, chunkId);
  } catch (err) {
    if (err instanceof ChunkError) throw new ChunkError(err.code, `${where}: ${err.message}`);
    throw err;
  }
}
