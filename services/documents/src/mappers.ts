// Rows and command results → proto messages, and the page-setup JSON both ways (it travels as a
// JSON string in proto and is stored as jsonb; parsing and formatting live here only).
import type { documentsLibraryV1, documentsV1 } from "@redline/grpc-stubs";
import { InputError } from "@redline/service-kit";
import type { CommitResult, NewConflict } from "./commands/commit.js";
import type { SaveResult } from "./commands/save.js";
import type { VersionView } from "./commands/versions.js";
import type { ConflictRow, DocumentRow, OutboxRow } from "./db/tables.js";

/** A page setup as stored (a JSON object) or null when none. */
export type PageSetup = Record<string, unknown> | null;

/**
 * The page setup of a request's `page_setup_json`: undefined for "" (not given), else the
 * object. InputError (400) when it is not a JSON object.
 */
export function parsePageSetup(json: string): Record<string, unknown> | undefined {
  if (!json) return undefined;
  try {
    const value = JSON.parse(json);
    if (value === null || typeof value !== "object" || Array.isArray(value)) throw new Error();
    return value as Record<string, unknown>;
  } catch {
    throw new InputError("page_setup must be a JSON object");
  }
}

/** The `page_setup_json` of a stored page setup: "" when none. */
export function formatPageSetup(pageSetup: PageSetup): string {
  return pageSetup ? JSON.stringify(pageSetup) : "";
}

/** DocumentMeta of a row; `versionId` names the version read (head by default). */
export function documentMeta(row: DocumentRow, versionId = row.head_version_id): documentsV1.DocumentMeta {
  return {
    documentId: row.id,
    title: row.title,
    versionId,
    chunkCount: row.chunk_count,
    sectionCount: row.section_count,
    pageSetupJson: formatPageSetup(row.page_setup),
    archived: row.archived_at !== null,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

/** ConflictRecord of a stored conflict, or of one just recorded (created now). */
export function conflictRecord(c: NewConflict | ConflictRow): documentsV1.ConflictRecord {
  return {
    conflictId: c.id,
    documentId: c.document_id,
    chunkId: c.chunk_id,
    kind: c.kind,
    sessionId: c.session_id,
    baseHtml: c.base_html,
    oursHtml: c.ours_html,
    theirsHtml: c.theirs_html,
    baseVersionId: c.base_version_id,
    headVersionId: c.head_version_id,
    createdAt: "created_at" in c ? c.created_at : new Date(),
  };
}

/** DocumentEvent of an outbox row (the payload as a JSON string). */
export function documentEvent(e: OutboxRow): documentsLibraryV1.DocumentEvent {
  return {
    id: Number(e.id),
    type: e.event_type,
    documentId: e.document_id,
    versionId: e.version_id,
    sessionId: e.session_id,
    createdAt: e.created_at,
    payloadJson: JSON.stringify(e.payload ?? {}),
  };
}

/** VersionInfo of a version row with its count of changed chunks; created_at in ISO 8601. */
export function versionInfo(v: VersionView): documentsLibraryV1.VersionInfo {
  return {
    versionId: v.row.id,
    seq: v.row.seq,
    kind: v.row.kind,
    sessionId: v.row.session_id ?? "",
    createdAt: new Date(v.row.created_at).toISOString(),
    chunksChanged: v.chunksChanged,
    summary: v.row.summary ?? "",
  };
}

/** CommitOperationsResponse of a commit's result (metadata at the new head, or head when nothing was written). */
export function commitResponse(r: CommitResult): documentsV1.CommitOperationsResponse {
  return {
    document: documentMeta(r.row),
    changes: r.changes,
    chunks: r.chunks,
    replayed: r.replayed,
    merged: r.merged,
    conflicts: r.conflicts.map(conflictRecord),
    mergedChunkIds: r.mergedChunkIds,
  };
}

/** SaveDocumentResponse of a save's result. */
export function saveResponse(r: SaveResult): documentsLibraryV1.SaveDocumentResponse {
  return { document: documentMeta(r.row), changedChunkIds: r.changedChunkIds, merged: r.merged, chunks: r.chunks };
}
