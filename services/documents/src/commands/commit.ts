// Committing chunk operations as one version, writing O(k) rows for k operations, with the
// three-way check against other sessions' commits since the writer's base version.
import { randomUUID } from "node:crypto";
import type { ChunkOperation, ChunkRecord } from "@redline/html-chunks";
import { ConflictError, InputError, type Knex, NotFoundError } from "@redline/service-kit";
import { insertConflicts } from "../db/store/conflicts.js";
import { findDocument } from "../db/store/documents.js";
import {
  chunkRecordsAt,
  chunksAt,
  chunksAtSeq,
  chunksChangedOnlyBySaves,
  chunksChangedSince,
  closeRevisions,
  insertRevisions,
  liveChunks,
} from "../db/store/revisions.js";
import { findVersion, findVersionByKey } from "../db/store/versions.js";
import { type ConflictRow, type DocumentRow, UNATTRIBUTED, type VersionAuthor, type VersionRow } from "../db/tables.js";
import { chunkChanges } from "./change-records.js";
import { type ChangeRecordView, planRevisions, type RevisionPlan, rowsToClose, rowsToInsert } from "./commit-plan.js";
import { isHeadingHtml } from "./headings.js";
import { recordVersion } from "./record-version.js";

export type { ChangeRecordView } from "./commit-plan.js";

/** A conflict as recorded (the row without its resolution fields). */
export type NewConflict = Omit<ConflictRow, "created_at" | "resolved_at" | "resolved_version_id">;

/** The result of a commit. */
export interface CommitResult {
  row: DocumentRow;
  /** Head when the commit locked the document, before it wrote anything. */
  previousVersionId: string;
  changes: ChangeRecordView[];
  /** Head chunks when asked for. */
  chunks: ChunkRecord[];
  /** True when head had moved past the base version and the operations were merged onto it. */
  merged: boolean;
  /** Chunks other sessions changed since the base, merged around (at most 200 listed). */
  mergedChunkIds: string[];
  /** Operations not applied because their chunk changed since the base (recordConflicts only). */
  conflicts: NewConflict[];
  /** False when every operation was a conflict: no version was written. */
  committed: boolean;
  /** True when the idempotency key matched an earlier commit: nothing was written. */
  replayed: boolean;
}

/** What a commit writes; see commitOperations. */
export interface CommitInput {
  documentId: string;
  baseVersionId: string;
  sessionId: string;
  operations: ChunkOperation[];
  summary: string;
  returnChunks: boolean;
  /** Apply what merges and record the clashing operations as conflicts instead of refusing all. */
  recordConflicts?: boolean;
  /** Who wrote, for conflict records and the version: "chat" (default) or "save". */
  writer?: "chat" | "save";
  /**
   * The base is the session's last-seen record, which may have missed the session's own saves
   * (a save whose answer was lost): a chunk changed since the base only by this session's saves
   * takes this write's word instead of clashing. Other sessions' changes merge or clash as ever.
   */
  supersedeOwnSaves?: boolean;
  /** `payload.kind` of the outbox event (default "edit"). */
  eventKind?: string;
  /** A second commit with the same key on this document writes nothing (replayed). */
  idempotencyKey?: string;
  /**
   * The operations' HTML comes from chunkHtml in this process (a save's diff), so it is
   * normalized already: validateChunkHtml (a fixed point on it) is skipped, ~0.2 ms a chunk.
   */
  normalized?: boolean;
  /** Who the version is attributed to (default UNATTRIBUTED). */
  author?: VersionAuthor;
  /** The writing RPC's span (traceparentOf(call.trace)), kept on the outbox row for the relay's publish. */
  traceparent?: string | null;
}

const MAX_MERGED_LISTED = 200;

/** Thrown inside the transaction so it rolls back; the conflicts are recorded after. */
class PendingConflicts extends Error {
  constructor(
    readonly conflicts: NewConflict[],
    readonly headVersionId: string,
  ) {
    super("chunk conflict");
  }
}

/** Conflicts a 409 lists; the rest are counted (`conflict_count`) and stay recorded for re-edit. */
const MAX_CONFLICTS_LISTED = 200;

/**
 * The 409 body of a refused write: the chunks, the head to rebase on, and the recorded
 * conflicts, at most 200 of each listed (`truncated` when more, `conflict_count` = all). The
 * body travels in a gRPC trailer: a save clashing on thousands of chunks made it too large to
 * deliver, and the call hung until its deadline.
 */
function chunkConflictError(conflicts: NewConflict[], headVersionId: string): ConflictError {
  const chunkIds = [...new Set(conflicts.map((c) => c.chunk_id))];
  const listed = chunkIds.slice(0, MAX_CONFLICTS_LISTED);
  const more = chunkIds.length - listed.length;
  const named = listed.slice(0, 20).join(", ") + (chunkIds.length > 20 ? `, and ${chunkIds.length - 20} more` : "");
  return new ConflictError(`Chunks changed by another session since your version: ${named}`, {
    code: "chunk_conflict",
    chunk_ids: listed,
    head_version_id: headVersionId,
    conflicts: conflicts.slice(0, MAX_CONFLICTS_LISTED).map((c) => ({ conflict_id: c.id, chunk_id: c.chunk_id })),
    conflict_count: conflicts.length,
    truncated: more > 0 || conflicts.length > MAX_CONFLICTS_LISTED,
    suggested_action: "re_edit",
  });
}

/**
 * Validates and commits `operations` on top of head as one version, with a `document_updated`
 * outbox event in the same transaction. Operations computed on an older base merge when they
 * touch chunks nobody changed since (inserts always merge: a deleted anchor keeps its place in
 * the order). Otherwise, with `recordConflicts`, the clashing operations are left out and
 * recorded as conflicts; without it ConflictError (409, code `chunk_conflict`, naming the chunks
 * and the recorded conflicts) and nothing is written. InputError (400) names an invalid
 * operation; ConflictError `document_archived` for an archived document.
 */
export async function commitOperations(db: Knex, ownerId: string, input: CommitInput): Promise<CommitResult> {
  try {
    const result = await db.transaction((trx) => commitInTransaction(trx, ownerId, input));
    if (result.conflicts.length > 0) await db.transaction((trx) => insertConflicts(trx, result.conflicts));
    return result;
  } catch (err) {
    if (!(err instanceof PendingConflicts)) throw err;
    // All or none: the 409 names every conflict id, so each must be stored.
    await db.transaction((trx) => insertConflicts(trx, err.conflicts));
    throw chunkConflictError(err.conflicts, err.headVersionId);
  }
}

/**
 * commitOperations inside the caller's transaction (conflict rows are returned, not written),
 * in phases: lock the document, replay an idempotent retry, merge against concurrent commits,
 * plan the revision rows, write the version.
 */
export async function commitInTransaction(
  trx: Knex.Transaction,
  ownerId: string,
  input: CommitInput,
): Promise<CommitResult> {
  if (input.operations.length === 0) throw new InputError("no operations to commit");
  const doc = await lockWritableDocument(trx, ownerId, input.documentId);
  const replayed = input.idempotencyKey ? await replay(trx, doc, input) : undefined;
  if (replayed) return replayed;
  const merge = await mergeOntoHead(trx, ownerId, doc, input);
  const previousVersionId = doc.head_version_id;
  const unchanged = { row: doc, previousVersionId, changes: [], chunks: [], committed: false, replayed: false };
  if (merge.operations.length === 0) return { ...unchanged, ...merge };
  const plan = await planRevisions(trx, doc.id, doc.head_seq + 1, merge.operations, input.normalized ?? false);
  const row = await writeVersion(trx, ownerId, doc, input, plan);
  const chunks = input.returnChunks ? await chunkRecordsAt(trx, doc.id) : [];
  return { ...merge, row, previousVersionId, changes: plan.changes, chunks, committed: true, replayed: false };
}

/** The owner's document, locked for the commit. NotFoundError; ConflictError `document_archived`. */
async function lockWritableDocument(trx: Knex.Transaction, ownerId: string, documentId: string): Promise<DocumentRow> {
  const doc = await findDocument(trx, ownerId, documentId, true);
  if (!doc) throw new NotFoundError("Document not found");
  if (doc.archived_at) {
    throw new ConflictError("The document is archived", { code: "document_archived", suggested_action: "unarchive" });
  }
  return doc;
}

/** The answer of a retried commit whose key already wrote a version, or undefined for a first call. */
async function replay(trx: Knex.Transaction, doc: DocumentRow, input: CommitInput): Promise<CommitResult | undefined> {
  // The document row is locked, so a concurrent commit with the same key waits for this one.
  const earlier = await findVersionByKey(trx, doc.id, input.idempotencyKey ?? "");
  if (!earlier) return undefined;
  const chunks = input.returnChunks ? await chunkRecordsAt(trx, doc.id) : [];
  // The same answer as the first call: a job taken over after its first run committed reports
  // the edits that run wrote, not none.
  const changes = await changesOfVersion(trx, doc.id, earlier.seq, input.operations);
  const nothing = { merged: false, mergedChunkIds: [], conflicts: [], committed: false };
  return { row: doc, previousVersionId: doc.head_version_id, chunks, changes, ...nothing, replayed: true };
}

/**
 * The change records version `seq` wrote, read back from its chunks against version seq - 1:
 * edits, creates (after the chunk before them) and deletes, in document order; each explanation
 * taken from the retried call's operation on that chunk (ids are new, as on the first call).
 */
async function changesOfVersion(
  trx: Knex.Transaction,
  documentId: string,
  seq: number,
  operations: ChunkOperation[],
): Promise<ChangeRecordView[]> {
  const [before, after] = await Promise.all([chunksAt(trx, documentId, seq - 1), chunksAt(trx, documentId, seq)]);
  const explanation = new Map(operations.map((op) => [op.chunkId, op.explanation]));
  return chunkChanges(documentId, before, after, {
    changeId: () => randomUUID(),
    explanation: (chunkId) => explanation.get(chunkId) ?? "",
  });
}

/** The operations to apply on head after the three-way check, and what the check found. */
interface Merge {
  operations: ChunkOperation[];
  merged: boolean;
  mergedChunkIds: string[];
  conflicts: NewConflict[];
}

/**
 * Rebases the operations onto head when the base is older: chunks other sessions changed since
 * the base are checked three-way; the rest merge. Throws PendingConflicts on a clash unless
 * `recordConflicts`. InputError when the base is not a version of this document.
 */
async function mergeOntoHead(
  trx: Knex.Transaction,
  ownerId: string,
  doc: DocumentRow,
  input: CommitInput,
): Promise<Merge> {
  if (!input.baseVersionId || input.baseVersionId === doc.head_version_id)
    return { operations: input.operations, merged: false, mergedChunkIds: [], conflicts: [] };
  const base = await findVersion(trx, doc.id, input.baseVersionId);
  if (!base) throw new InputError("base_version_id is not a version of this document");
  const [changed, own] = await Promise.all([
    chunksChangedSince(trx, doc.id, base.seq),
    input.supersedeOwnSaves ? chunksChangedOnlyBySaves(trx, doc.id, base.seq, input.sessionId) : new Set<string>(),
  ]);
  // An insert touches only a chunk whose own id changed since the base: a save's new chunk ids
  // are derived from session, base and HTML, so a retried save names the chunks it added before.
  const touched = [...new Set(input.operations.filter((op) => changed.has(op.chunkId)).map((op) => op.chunkId))];
  const { operations, conflicts } =
    touched.length > 0
      ? await threeWay(trx, ownerId, doc, base, input, touched, own)
      : { operations: input.operations, conflicts: [] };
  if (conflicts.length > 0 && !input.recordConflicts) throw new PendingConflicts(conflicts, doc.head_version_id);
  const clashing = new Set(conflicts.map((c) => c.chunk_id));
  const mergedChunkIds = [...changed].filter((id) => !clashing.has(id) && !own.has(id)).slice(0, MAX_MERGED_LISTED);
  return { operations, merged: true, mergedChunkIds, conflicts };
}

/**
 * The three-way check of the chunks both sides touched. Both making the same change (the
 * writer's last word is head's HTML, or both deleted it, or both added the same new chunk) is no
 * conflict: those operations are dropped. A chunk in `own` (changed since the base only by the
 * writer's session's saves) takes the writer's operations, a new chunk head already has as an
 * edit of it. Every other touched chunk is a conflict, and the writer's operations on it are
 * left out.
 */
async function threeWay(
  trx: Knex.Transaction,
  ownerId: string,
  doc: DocumentRow,
  base: VersionRow,
  input: CommitInput,
  touched: string[],
  own: Set<string>,
): Promise<{ operations: ChunkOperation[]; conflicts: NewConflict[] }> {
  const [atBase, atHead] = await Promise.all([
    chunksAtSeq(trx, doc.id, base.seq, touched),
    liveChunks(trx, doc.id, touched),
  ]);
  const baseHtml = new Map(atBase.map((r) => [r.chunk_id, r.html]));
  const headHtml = new Map(atHead.map((r) => [r.chunk_id, r.html]));
  // The writer's last word on each chunk (one pass: a save may touch every chunk).
  const lastOp = new Map(input.operations.map((op) => [op.chunkId, op]));
  // A chunk the base did not have: the writer adds it (a move's insert names a base chunk).
  const fresh = (id: string) => !baseHtml.has(id);
  const converged = new Set(
    touched.filter((id) => {
      const last = lastOp.get(id);
      if (last?.kind === "delete") return !headHtml.has(id);
      if (last?.kind === "insert") return fresh(id) && headHtml.get(id) === last.html;
      return last?.kind === "replace" && headHtml.get(id) === last.html;
    }),
  );
  // The session's later word on its own chunk; one its save deleted cannot be edited (clashes),
  // but one it added and deleted may be added again.
  const superseded = (id: string) => own.has(id) && (headHtml.has(id) || fresh(id));
  const clashing = new Set(touched.filter((id) => !converged.has(id) && !superseded(id)));
  const conflicts = [...clashing].map((id): NewConflict => {
    // The writer's last word on the chunk: its final replace, or "" when it deleted it.
    const last = lastOp.get(id);
    return {
      id: randomUUID(),
      owner_id: ownerId,
      document_id: doc.id,
      chunk_id: id,
      kind: input.writer ?? "chat",
      session_id: input.sessionId,
      base_html: baseHtml.get(id) ?? "",
      ours_html: last && last.kind !== "delete" ? last.html : "",
      theirs_html: headHtml.get(id) ?? "",
      base_version_id: base.id,
      head_version_id: doc.head_version_id,
    };
  });
  const operations = input.operations.flatMap((op): ChunkOperation[] => {
    if (clashing.has(op.chunkId) || (converged.has(op.chunkId) && (op.kind !== "insert" || fresh(op.chunkId))))
      return [];
    // A new chunk head already has (the session's own earlier save added it) is edited in place.
    if (op.kind === "insert" && fresh(op.chunkId) && headHtml.has(op.chunkId))
      return [{ kind: "replace", chunkId: op.chunkId, html: op.html, explanation: op.explanation }];
    return [op];
  });
  return { operations, conflicts };
}

/** Head's chunk and section counts after `changes`. */
function countsAfter(doc: DocumentRow, changes: ChangeRecordView[]): { chunkCount: number; sectionCount: number } {
  let chunkCount = doc.chunk_count;
  let sectionCount = doc.section_count;
  for (const c of changes) {
    if (c.operation !== "create") chunkCount -= 1;
    if (c.operation !== "delete") chunkCount += 1;
    if (c.oldHtml && isHeadingHtml(c.oldHtml)) sectionCount -= 1;
    if (c.newHtml && isHeadingHtml(c.newHtml)) sectionCount += 1;
  }
  return { chunkCount, sectionCount };
}

/** Writes the plan's revision rows and the version (row, head, event); the document row at the new head. */
async function writeVersion(
  trx: Knex.Transaction,
  ownerId: string,
  doc: DocumentRow,
  input: CommitInput,
  plan: RevisionPlan,
): Promise<DocumentRow> {
  await closeRevisions(trx, doc.id, rowsToClose(plan), plan.seq);
  await insertRevisions(trx, rowsToInsert(plan));
  const summary = input.summary.slice(0, 500);
  const chunkIds = [...new Set(plan.changes.map((c) => c.chunkId))];
  return recordVersion(trx, doc, {
    ownerId,
    sessionId: input.sessionId,
    kind: "edit",
    summary,
    idempotencyKey: input.idempotencyKey,
    author: input.author ?? UNATTRIBUTED,
    writer: input.writer ?? "chat",
    traceparent: input.traceparent,
    head: countsAfter(doc, plan.changes),
    payload: { kind: input.eventKind ?? "edit", chunk_ids: chunkIds, summary },
  });
}
