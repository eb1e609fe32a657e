// Reading documents at head or at a version.
import type { ChunkRecord } from "@redline/html-chunks";
import { type Knex, NotFoundError } from "@redline/service-kit";
import { findDocument } from "../db/store/documents.js";
import { chunkRecordsAt } from "../db/store/revisions.js";
import { findVersion } from "../db/store/versions.js";
import type { DocumentRow } from "../db/tables.js";

/** A document as returned by the commands: its row and (when read) its chunks in order. */
export interface DocumentView {
  row: DocumentRow;
  chunks: ChunkRecord[];
  /** The version the chunks belong to. */
  versionId: string;
  /** The chunks of the version the document's original was loaded at (when read with includeSource). */
  sourceChunks?: ChunkRecord[];
}

/**
 * Reads the owner's document; `versionId` picks an older version (NotFoundError when it is
 * not one of this document's). Chunks are read only when `includeChunks`; with `includeSource`
 * and a document loaded from an original, also the chunks of the version it was loaded at.
 */
export async function getDocument(
  db: Knex,
  ownerId: string,
  input: { documentId: string; versionId?: string; includeChunks: boolean; includeSource?: boolean },
): Promise<DocumentView> {
  // One snapshot: the row's head version and the live chunks must belong together even when a
  // commit lands between the two reads.
  return db.transaction((trx) => readDocument(trx, ownerId, input), SNAPSHOT);
}

/** Options of a read-only transaction that sees one snapshot of the database. */
export const SNAPSHOT = { isolationLevel: "repeatable read", readOnly: true } as const;

async function readDocument(
  db: Knex.Transaction,
  ownerId: string,
  input: { documentId: string; versionId?: string; includeChunks: boolean; includeSource?: boolean },
): Promise<DocumentView> {
  const row = await findDocument(db, ownerId, input.documentId);
  if (!row) throw new NotFoundError("Document not found");
  let seq = row.head_seq;
  let versionId = row.head_version_id;
  if (input.versionId && input.versionId !== row.head_version_id) {
    const version = await findVersion(db, row.id, input.versionId);
    if (!version) throw new NotFoundError("Version not found");
    seq = version.seq;
    versionId = version.id;
  }
  const chunks = input.includeChunks ? await chunkRecordsAt(db, row.id, seq === row.head_seq ? undefined : seq) : [];
  const loadSeq = row.source_seq;
  const sourceChunks =
    input.includeSource && row.source_id && loadSeq !== null
      ? await chunkRecordsAt(db, row.id, loadSeq === row.head_seq ? undefined : loadSeq)
      : undefined;
  return { row, chunks, versionId, ...(sourceChunks && { sourceChunks }) };
}
