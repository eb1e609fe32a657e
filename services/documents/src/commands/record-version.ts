// Writing a new version on head: the version row, the head moved with its counts, and the
// `document_updated` event, in the caller's transaction (commits and content replaces share it).
import { randomUUID } from "node:crypto";
import type { Knex } from "@redline/service-kit";
import { updateHead } from "../db/store/documents.js";
import { appendDocumentUpdated } from "../db/store/outbox.js";
import { insertVersion } from "../db/store/versions.js";
import type { DocumentRow, VersionAuthor, VersionRow, VersionWriter } from "../db/tables.js";

/** A version to write on top of `doc`'s head. */
export interface NewVersion {
  ownerId: string;
  sessionId: string;
  kind: VersionRow["kind"];
  /** At most 500 characters are stored. */
  summary: string;
  idempotencyKey?: string | null;
  /** Who made it (see authorOf). */
  author: VersionAuthor;
  /** The commit kind that wrote it (commits only). */
  writer?: VersionWriter;
  /** The writing RPC's span (traceparentOf(call.trace)), kept on the outbox row for the relay's publish. */
  traceparent?: string | null;
  /** The head's counts after this version (and title/page setup when they change with it). */
  head: { chunkCount: number; sectionCount: number; title?: string; pageSetup?: Record<string, unknown> | null };
  /** The event's payload (`kind` says what happened). */
  payload: Record<string, unknown>;
}

/**
 * Writes version `doc.head_seq + 1` (chunk revisions are the caller's): its row, the document's
 * head, and the outbox event. Returns the document row at the new head.
 */
export async function recordVersion(trx: Knex.Transaction, doc: DocumentRow, v: NewVersion): Promise<DocumentRow> {
  const versionId = randomUUID();
  const seq = doc.head_seq + 1;
  await insertVersion(trx, {
    id: versionId,
    document_id: doc.id,
    seq,
    parent_id: doc.head_version_id,
    session_id: v.sessionId,
    kind: v.kind,
    summary: v.summary.slice(0, 500),
    idempotency_key: v.idempotencyKey || null,
    author: v.author.name,
    author_kind: v.author.kind,
    writer: v.writer ?? null,
  });
  const row = await updateHead(trx, doc.id, { versionId, seq, ...v.head });
  const event = {
    ownerId: v.ownerId,
    documentId: doc.id,
    versionId,
    sessionId: v.sessionId,
    payload: v.payload,
    traceparent: v.traceparent,
  };
  await appendDocumentUpdated(trx, event);
  return row;
}
