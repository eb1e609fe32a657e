// Rows and command results → proto messages, and the page setup both ways between its stored
// form (a jsonb object) and redline.common.v1.PageSetup (converted here only).
import { type commonV1, type documentsLibraryV1, documentsV1, NullValue } from "@redline/grpc-stubs";
import { type CallContext, requirePrincipal } from "@redline/service-kit";
import type { CommitResult, NewConflict } from "./commands/commit.js";
import type { SaveResult } from "./commands/save.js";
import type { TurnResult } from "./commands/turn.js";
import type { VersionView } from "./commands/versions.js";
import {
  AI_AUTHOR,
  type ConflictRow,
  type DocumentRow,
  type OutboxRow,
  UNATTRIBUTED,
  type VersionAuthor,
} from "./db/tables.js";

/**
 * A page setup as stored in the jsonb column: `{size?, orientation?, margins?}` with size a name
 * or `{width, height}` in inches and margins a name, `{top, right, bottom, left}` in inches or
 * null; null when the document has none.
 */
export type PageSetup = Record<string, unknown> | null;

function record(value: unknown): Record<string, unknown> | undefined {
  return value !== null && typeof value === "object" && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : undefined;
}

function num(value: unknown): number {
  return typeof value === "number" ? value : 0;
}

/**
 * The proto PageSetup of a stored one (undefined when none). Keys other than size, orientation
 * and margins, and values of another shape, have no proto form and are left out.
 */
export function pageSetupToProto(stored: PageSetup | undefined): commonV1.PageSetup | undefined {
  if (!stored) return undefined;
  const { size, orientation, margins } = stored;
  const sizeObject = record(size);
  const marginsObject = record(margins);
  return {
    ...(typeof size === "string" && { sizeName: size }),
    ...(sizeObject && { sizeInches: { width: num(sizeObject.width), height: num(sizeObject.height) } }),
    ...(typeof orientation === "string" && { orientation }),
    ...(typeof margins === "string" && { marginsName: margins }),
    ...(marginsObject && {
      marginsInches: {
        top: num(marginsObject.top),
        right: num(marginsObject.right),
        bottom: num(marginsObject.bottom),
        left: num(marginsObject.left),
      },
    }),
    ...(margins === null && { marginsNull: NullValue.NULL_VALUE }),
  };
}

/**
 * The stored (jsonb) form of a request's PageSetup: undefined when the request has none. Only the
 * parts the message sets become keys, so `{size: "A4"}` is stored as `{"size": "A4"}`.
 */
export function pageSetupFromProto(p: commonV1.PageSetup | undefined): Record<string, unknown> | undefined {
  if (!p) return undefined;
  const stored: Record<string, unknown> = {};
  if (p.sizeName !== undefined) stored.size = p.sizeName;
  else if (p.sizeInches) stored.size = { width: p.sizeInches.width, height: p.sizeInches.height };
  if (p.orientation !== undefined) stored.orientation = p.orientation;
  if (p.marginsName !== undefined) stored.margins = p.marginsName;
  else if (p.marginsInches) {
    const { top, right, bottom, left } = p.marginsInches;
    stored.margins = { top, right, bottom, left };
  } else if (p.marginsNull !== undefined) stored.margins = null;
  return stored;
}

/** DocumentMeta of a row; `versionId` names the version read (head by default). */
export function documentMeta(row: DocumentRow, versionId = row.head_version_id): documentsV1.DocumentMeta {
  return {
    documentId: row.id,
    title: row.title,
    versionId,
    chunkCount: row.chunk_count,
    sectionCount: row.section_count,
    pageSetup: pageSetupToProto(row.page_setup),
    archived: row.archived_at !== null,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    ...(row.source_id && { source: { sourceId: row.source_id, format: row.source_format ?? "" } }),
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

/**
 * The typed payload of a stored event payload (jsonb): each field set only when its key is there
 * with the expected type; other keys have no proto form.
 */
export function eventPayload(stored: Record<string, unknown> | null): documentsLibraryV1.DocumentEventPayload {
  const p = stored ?? {};
  const str = (key: string) => (typeof p[key] === "string" ? (p[key] as string) : undefined);
  const int = (key: string) => (typeof p[key] === "number" ? (p[key] as number) : undefined);
  const chunkIds = p.chunk_ids;
  return {
    kind: str("kind"),
    chunkIds: Array.isArray(chunkIds) ? { ids: chunkIds.map(String) } : undefined,
    summary: str("summary"),
    title: str("title"),
    pageSetup: pageSetupToProto(record(p.page_setup)),
    pageSetupCleared: "page_setup" in p && p.page_setup === null,
    changedChunks: int("changed_chunks"),
    chunkCount: int("chunk_count"),
  };
}

/** DocumentEvent of an outbox row. */
export function documentEvent(e: OutboxRow): documentsLibraryV1.DocumentEvent {
  return {
    id: Number(e.id),
    type: e.event_type,
    documentId: e.document_id,
    versionId: e.version_id,
    sessionId: e.session_id,
    createdAt: e.created_at,
    payload: eventPayload(e.payload),
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
    author: v.row.author ?? UNATTRIBUTED.name,
    authorKind: v.row.author_kind ?? UNATTRIBUTED.kind,
  };
}

/**
 * Who a write is attributed to: "Redline AI" when the request says AI, else the calling user by
 * the name the principal carries (its user id when it carries none). The name never comes from
 * a request field, so no caller can write as someone else.
 */
export function versionAuthor(call: CallContext, kind: documentsV1.AuthorKind | undefined): VersionAuthor {
  if (kind === documentsV1.AuthorKind.AUTHOR_KIND_AI) return AI_AUTHOR;
  const principal = requirePrincipal(call);
  return { kind: "user", name: principal.userName || principal.userId || UNATTRIBUTED.name };
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

/** CommitTurnResponse of a turn's writes (its commit's fields empty when it had no operations). */
export function turnResponse(r: TurnResult): documentsV1.CommitTurnResponse {
  const { commit } = r;
  return {
    document: documentMeta(r.row),
    previousVersionId: r.previousVersionId,
    loadedVersionId: r.loadedVersionId,
    loadReplayed: r.loadReplayed,
    changes: commit?.changes ?? [],
    merged: commit?.merged ?? false,
    conflicts: (commit?.conflicts ?? []).map(conflictRecord),
    mergedChunkIds: commit?.mergedChunkIds ?? [],
    replayed: commit?.replayed ?? false,
    chunks: commit?.chunks ?? [],
  };
}

/** SaveDocumentResponse of a save's result. */
export function saveResponse(r: SaveResult): documentsLibraryV1.SaveDocumentResponse {
  return { document: documentMeta(r.row), changedChunkIds: r.changedChunkIds, merged: r.merged, chunks: r.chunks };
}
