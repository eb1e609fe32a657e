import { documentsV1 } from "@redline/grpc-stubs";
import { ownerOf, SchemaError } from "@redline/service-kit";
import { type ReadKind, readDocument as read } from "../commands/read-document.js";
import type { DocumentsRpc } from "./call.js";

const KINDS: Partial<Record<documentsV1.ReadMode, ReadKind>> = {
  [documentsV1.ReadMode.READ_MODE_OUTLINE]: "outline",
  [documentsV1.ReadMode.READ_MODE_SECTION]: "section",
  [documentsV1.ReadMode.READ_MODE_CHUNKS]: "chunks",
  [documentsV1.ReadMode.READ_MODE_TABLE_ROWS]: "table_rows",
};

/**
 * ReadDocument: one read of the caller's document at head (outline page, section, chunks, a
 * table's rows; commands/read-document.ts). NotFoundError (404) when not the caller's;
 * SchemaError (422) naming the field for an unset mode or an id the document does not have.
 */
export const readDocument: DocumentsRpc<"readDocument"> = async (ctx, req, call) => {
  const kind = KINDS[req.mode];
  if (!kind) throw new SchemaError([{ type: "missing", loc: ["body", "mode"], msg: "mode is required" }]);
  const res = await read(ctx.db, ownerOf(call), {
    documentId: req.documentId,
    kind,
    headingsOnly: req.headingsOnly,
    fromChunkId: req.fromChunkId,
    limit: req.limit,
    chunkIds: req.chunkIds,
    tableNumber: req.tableNumber,
    rowOffset: req.rowOffset,
    rowLimit: req.rowLimit,
  });
  return {
    versionId: res.versionId,
    chunkCount: res.chunkCount,
    outline: res.outline.map((e) => ({
      chunkId: e.chunkId,
      tag: e.tag,
      level: e.level,
      preview: e.preview,
      sectionChunks: e.sectionChunks,
    })),
    nextFromChunkId: res.nextFromChunkId,
    chunks: res.chunks,
    leftOutChunkIds: res.leftOutChunkIds,
    unknownChunkIds: res.unknownChunkIds,
    tableChunkId: res.tableChunkId,
    rows: res.rows,
    rowCount: res.rowCount,
  };
};
