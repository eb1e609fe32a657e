// Concurrent-edit conflicts of one chunk (endpoint 18): finding the open ones, and writing the
// resolved chunk on head while closing them, in one transaction.
import type { ChunkOperation } from "@redline/html-chunks";
import { type Knex, NotFoundError } from "@redline/service-kit";
import { findConflict, openConflicts, resolveConflicts } from "../db/store/conflicts.js";
import { liveChunks } from "../db/store/revisions.js";
import type { ConflictRow, DocumentRow, VersionAuthor } from "../db/tables.js";
import { commitInTransaction } from "./commit.js";

/**
 * Open conflicts of `chunkId` in the owner's `documentIds`, newest first; when there is none,
 * the document that holds the chunk at head ("" when none does).
 */
export async function findConflicts(
  db: Knex,
  ownerId: string,
  documentIds: string[],
  chunkId: string,
): Promise<{ conflicts: ConflictRow[]; documentId: string }> {
  const conflicts = await openConflicts(db, ownerId, documentIds, chunkId);
  if (conflicts.length > 0) return { conflicts, documentId: conflicts[0].document_id };
  for (const id of documentIds) {
    // liveChunks is scoped by document; the owner check happens on the commit that follows.
    if ((await liveChunks(db, id, [chunkId])).length > 0) return { conflicts, documentId: id };
  }
  return { conflicts, documentId: "" };
}

/**
 * Writes `html` as the chunk's content on head (re-creating it in its old place when it was
 * deleted; deleting it when `html` is empty) and marks the chunk's open conflicts resolved.
 * NotFoundError for an unknown conflict, document or chunk.
 */
export async function resolveConflict(
  db: Knex,
  ownerId: string,
  input: {
    conflictId: string;
    documentId: string;
    chunkId: string;
    html: string;
    sessionId: string;
    author?: VersionAuthor;
    /** The writing RPC's span (traceparentOf(call.trace)), for the event's publish. */
    traceparent?: string | null;
  },
): Promise<{ row: DocumentRow; html: string }> {
  return db.transaction(async (trx) => {
    if (input.conflictId) {
      const conflict = await findConflict(trx, ownerId, input.conflictId);
      if (!conflict || conflict.document_id !== input.documentId || conflict.chunk_id !== input.chunkId)
        throw new NotFoundError("Conflict not found");
    }
    const live = (await liveChunks(trx, input.documentId, [input.chunkId]))[0];
    let op: ChunkOperation;
    if (!input.html) {
      if (!live) throw new NotFoundError("Chunk not found");
      op = { kind: "delete", chunkId: input.chunkId, explanation: "re-edit" };
    } else if (live) {
      op = { kind: "replace", chunkId: input.chunkId, html: input.html, explanation: "re-edit" };
    } else {
      // Anchoring a deleted chunk on itself puts it back where its last revision was.
      op = {
        kind: "insert",
        chunkId: input.chunkId,
        html: input.html,
        afterChunkId: input.chunkId,
        explanation: "re-edit",
      };
    }
    const result = await commitInTransaction(trx, ownerId, {
      documentId: input.documentId,
      baseVersionId: "",
      sessionId: input.sessionId,
      operations: [op],
      summary: "concurrent edit resolved",
      returnChunks: false,
      author: input.author,
      traceparent: input.traceparent,
      eventKind: "re-edit",
    });
    await resolveConflicts(trx, input.documentId, input.chunkId, result.row.head_version_id);
    return { row: result.row, html: result.changes[0]?.newHtml ?? "" };
  });
}
