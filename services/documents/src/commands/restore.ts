// Restoring a version (issue 34): history is never rewritten, so a restore writes a NEW version
// whose chunks are the older version's, through the same revision plan as a content replace
// (chunks that did not change keep their revision) and the same `document_updated` outbox event
// as every commit, so other sessions see it in their doc-events and rosters.
import { ConflictError, type Knex, NotFoundError } from "@redline/service-kit";
import { findDocument } from "../db/store/documents.js";
import { chunkRecordsAt, chunksAt, closeRevisions, insertRevisions } from "../db/store/revisions.js";
import { findVersion, versionWithChanges } from "../db/store/versions.js";
import { type DocumentRow, UNATTRIBUTED, type VersionAuthor } from "../db/tables.js";
import { isHeadingHtml } from "./headings.js";
import { replaceRevisions } from "./load.js";
import { recordVersion } from "./record-version.js";
import type { VersionView } from "./versions.js";

/** What a restore did: the document after it, the version it answers, and what it changed. */
export interface RestoreResult {
  row: DocumentRow;
  /** The version written; head when nothing was (`restored` false). */
  version: VersionView;
  /** False when head already had the version's content: nothing was written. */
  restored: boolean;
  /** Chunks whose revision the new version opened or closed (empty when not restored). */
  changedChunkIds: string[];
}

/**
 * Writes version head + 1 of the owner's document equal to version `versionId`: the same
 * chunks (ids, HTML, out-of-flow part marks) in the same order. The title, page setup and
 * original file reference stay as they are at head: they are document metadata, not versioned
 * content. Restoring head, or any version whose chunks equal head's, writes nothing and answers
 * head with `restored` false. One transaction with the document row locked, so a concurrent
 * commit lands before or after, never in between. Not billed (no AI turn). NotFoundError naming
 * the document (unknown or foreign) or the version (not one of this document's); ConflictError
 * 409 `document_archived` for an archived document.
 */
export function restoreVersion(
  db: Knex,
  ownerId: string,
  input: {
    documentId: string;
    versionId: string;
    sessionId: string;
    /** Who the new version is attributed to (default UNATTRIBUTED). */
    author?: VersionAuthor;
    /** The RPC's span (traceparentOf(call.trace)), for the event's publish. */
    traceparent?: string | null;
  },
): Promise<RestoreResult> {
  return db.transaction(async (trx) => {
    const doc = await findDocument(trx, ownerId, input.documentId, true);
    if (!doc) throw new NotFoundError("Document not found");
    const target = await findVersion(trx, doc.id, input.versionId);
    if (!target) throw new NotFoundError("Version not found");
    if (doc.archived_at !== null)
      throw new ConflictError("Document is archived; unarchive it first", { code: "document_archived" });
    const [chunks, live] = await Promise.all([chunkRecordsAt(trx, doc.id, target.seq), chunksAt(trx, doc.id)]);
    const { toClose, rows } = replaceRevisions(doc, live, chunks);
    const answer = async (row: DocumentRow, restored: boolean, changedChunkIds: string[]): Promise<RestoreResult> => {
      const found = await versionWithChanges(trx, row.id, row.head_version_id);
      if (!found) throw new Error(`head version ${row.head_version_id} of ${row.id} has no row`);
      const { chunks_changed, ...version } = found;
      return { row, version: { row: version, chunksChanged: chunks_changed }, restored, changedChunkIds };
    };
    if (toClose.length === 0 && rows.length === 0) return answer(doc, false, []);
    await closeRevisions(trx, doc.id, toClose, doc.head_seq + 1);
    await insertRevisions(trx, rows);
    const changedChunkIds = [...new Set([...toClose, ...rows.map((r) => r.chunk_id)])];
    const summary = `restored from version ${target.seq}`;
    const row = await recordVersion(trx, doc, {
      ownerId,
      sessionId: input.sessionId,
      kind: "restore",
      summary,
      author: input.author ?? UNATTRIBUTED,
      traceparent: input.traceparent,
      head: { chunkCount: chunks.length, sectionCount: chunks.filter((c) => isHeadingHtml(c.html)).length },
      payload: { kind: "restore", chunk_ids: changedChunkIds, summary, restored_from: target.id },
    });
    return answer(row, true, changedChunkIds);
  });
}
