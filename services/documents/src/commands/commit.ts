// Committing chunk operations as one version, writing O(k) rows for k operations, with the
// three-way check against other sessions' commits since the writer's base version.
import { randomUUID } from "node:crypto";
import { ChunkError, type ChunkOperation, type ChunkRecord, partOf, validateChunkHtml } from "@redline/html-chunks";
import { ConflictError, InputError, type Knex, NotFoundError } from "@redline/service-kit";
import { generateNKeysBetween } from "fractional-indexing";
import { insertConflicts } from "../db/store/conflicts.js";
import { findDocument, updateHead } from "../db/store/documents.js";
import { appendOutbox } from "../db/store/outbox.js";
import {
  chunksAt,
  chunksAtSeq,
  chunksChangedSince,
  closeRevisions,
  insertRevisions,
  lastRevision,
  liveChunks,
  livePositions,
  nextLivePosition,
} from "../db/store/revisions.js";
import { findVersion, findVersionByKey, insertVersion } from "../db/store/versions.js";
import type { ChunkRevisionRow, ConflictRow, DocumentRow } from "../db/tables.js";
import { isHeadingHtml } from "./headings.js";

/** A change record (unshown-parts.md, Change records). */
export interface ChangeRecordView {
  changeId: string;
  operation: "edit" | "create" | "delete";
  chunkId: string;
  documentId: string;
  oldHtml: string;
  newHtml: string;
  aiExplanation: string;
  insertAfterChunkId: string;
}

/** A conflict as recorded (the row without its resolution fields). */
export type NewConflict = Omit<ConflictRow, "created_at" | "resolved_at" | "resolved_version_id">;

/** The result of a commit. */
export interface CommitResult {
  row: DocumentRow;
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
  /** Who wrote, for conflict records: "chat" (default) or "save". */
  writer?: "chat" | "save";
  /** `payload.kind` of the outbox event (default "edit"). */
  eventKind?: string;
  /** A second commit with the same key on this document writes nothing (replayed). */
  idempotencyKey?: string;
  /**
   * The operations' HTML comes from chunkHtml in this process (a save's diff), so it is
   * normalized already: validateChunkHtml (a fixed point on it) is skipped, ~0.2 ms a chunk.
   */
  normalized?: boolean;
}

const MAX_MERGED_LISTED = 200;

function invalid(index: number, message: string): InputError {
  return new InputError(`operation ${index}: ${message}`, { code: "invalid_operation", operation_index: index });
}

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
export function chunkConflictError(conflicts: NewConflict[], headVersionId: string): ConflictError {
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

/** Inserts from `index` on that each anchor on the insert just before them (1 when none does). */
function chainLength(operations: ChunkOperation[], index: number): number {
  let n = 1;
  while (true) {
    const next = operations[index + n];
    const prev = operations[index + n - 1];
    if (next?.kind !== "insert" || next.afterChunkId !== prev.chunkId) return n;
    n += 1;
  }
}

/** Above this many inserts a commit reads the live positions once instead of once per run. */
const BULK_POSITIONS = 256;

/**
 * The first stored live position after a key (null at the end). Few inserts query per run (a
 * commit stays O(k) on a large document); many read the live positions once and binary-search.
 */
async function nextStoredPosition(
  trx: Knex.Transaction,
  documentId: string,
  inserts: number,
): Promise<(after: string | null) => Promise<string | null>> {
  if (inserts <= BULK_POSITIONS) return (after) => nextLivePosition(trx, documentId, after);
  // Keys are ASCII, so JS string order is the column's C collation.
  const sorted = await livePositions(trx, documentId);
  return async (after) => {
    if (after === null) return sorted[0] ?? null;
    let lo = 0;
    let hi = sorted.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (sorted[mid] <= after) lo = mid + 1;
      else hi = mid;
    }
    return sorted[lo] ?? null;
  };
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

/** commitOperations inside the caller's transaction (conflict rows are returned, not written). */
export async function commitInTransaction(
  trx: Knex.Transaction,
  ownerId: string,
  input: CommitInput,
): Promise<CommitResult> {
  if (input.operations.length === 0) throw new InputError("no operations to commit");
  const doc = await findDocument(trx, ownerId, input.documentId, true);
  if (!doc) throw new NotFoundError("Document not found");
  if (doc.archived_at) {
    throw new ConflictError("The document is archived", {
      code: "document_archived",
      suggested_action: "unarchive",
    });
  }
  if (input.idempotencyKey) {
    // The document row is locked above, so a concurrent commit with the same key waits here.
    const earlier = await findVersionByKey(trx, doc.id, input.idempotencyKey);
    if (earlier) {
      const chunks = input.returnChunks
        ? (await chunksAt(trx, doc.id)).map((r) => ({ chunkId: r.chunk_id, html: r.html }))
        : [];
      return {
        row: doc,
        changes: [],
        chunks,
        merged: false,
        mergedChunkIds: [],
        conflicts: [],
        committed: false,
        replayed: true,
      };
    }
  }
  let merged = false;
  let mergedChunkIds: string[] = [];
  let operations = input.operations;
  const conflicts: NewConflict[] = [];
  if (input.baseVersionId && input.baseVersionId !== doc.head_version_id) {
    const base = await findVersion(trx, doc.id, input.baseVersionId);
    if (!base) throw new InputError("base_version_id is not a version of this document");
    const changed = await chunksChangedSince(trx, doc.id, base.seq);
    const touched = [
      ...new Set(operations.filter((op) => op.kind !== "insert" && changed.has(op.chunkId)).map((op) => op.chunkId)),
    ];
    const clashing = new Set<string>();
    if (touched.length > 0) {
      const [atBase, atHead] = await Promise.all([
        chunksAtSeq(trx, doc.id, base.seq, touched),
        liveChunks(trx, doc.id, touched),
      ]);
      const baseHtml = new Map(atBase.map((r) => [r.chunk_id, r.html]));
      const headHtml = new Map(atHead.map((r) => [r.chunk_id, r.html]));
      // Both sides making the same change is no conflict: when the writer's last word on a chunk
      // already is head (the same HTML, or both deleted it), its operations on it are dropped.
      // The writer's last word on each chunk (one pass: a save may touch every chunk).
      const lastOp = new Map(operations.map((op) => [op.chunkId, op]));
      const converged = new Set(
        touched.filter((id) => {
          const last = lastOp.get(id);
          if (last?.kind === "delete") return !headHtml.has(id);
          return last?.kind === "replace" && headHtml.get(id) === last.html;
        }),
      );
      operations = operations.filter((op) => op.kind === "insert" || !converged.has(op.chunkId));
      const ids = touched.filter((id) => !converged.has(id));
      for (const id of ids) clashing.add(id);
      for (const id of ids) {
        // The writer's last word on the chunk: its final replace, or "" when it deleted it.
        const last = lastOp.get(id);
        conflicts.push({
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
        });
      }
      if (conflicts.length > 0 && !input.recordConflicts) throw new PendingConflicts(conflicts, doc.head_version_id);
      operations = operations.filter((op) => !clashing.has(op.chunkId));
    }
    merged = true;
    mergedChunkIds = [...changed].filter((id) => !clashing.has(id)).slice(0, MAX_MERGED_LISTED);
  }
  if (operations.length === 0) {
    return { row: doc, changes: [], chunks: [], merged, mergedChunkIds, conflicts, committed: false, replayed: false };
  }

  const seq = doc.head_seq + 1;
  const targets = operations.filter((op) => op.kind !== "insert").map((op) => op.chunkId);
  const anchors = operations.flatMap((op) => (op.kind === "insert" && op.afterChunkId ? [op.afterChunkId] : []));
  const insertIds = operations.flatMap((op) => (op.kind === "insert" ? [op.chunkId] : []));
  // One read for every chunk the operations name (inserted ids too: an insert of a chunk that is
  // live and not deleted earlier in this commit is refused), instead of one read per insert.
  const live = new Map(
    (await liveChunks(trx, doc.id, [...new Set([...targets, ...anchors, ...insertIds])])).map((r) => [r.chunk_id, r]),
  );
  const nextStored = await nextStoredPosition(trx, doc.id, insertIds.length);
  const chainKeys = new Map<number, string>();
  // Chunks created by this commit, with their positions, so later inserts can anchor on them.
  const created = new Map<string, ChunkRevisionRow>();
  const closed = new Set<string>();
  // Rows to insert by chunk id: a later operation on the same chunk replaces its row.
  const inserts = new Map<string, ChunkRevisionRow>();
  const changes: ChangeRecordView[] = [];
  // Positions taken by inserts of this commit (a later insert's upper bound may be one of them).
  const newPositions: string[] = [];

  const current = (id: string) => (closed.has(id) ? undefined : (created.get(id) ?? live.get(id)));
  // Normalized input (a save's chunkHtml output) skips revalidation unless its part mark is not
  // the one this chunk may carry; then validation strips it.
  const checkedHtml = (html: string, id: string, part: string | null) =>
    input.normalized && (partOf(html) ?? null) === part ? html : validateChunkHtml(html, id, { part });
  for (const [index, op] of operations.entries()) {
    try {
      if (op.kind === "insert") {
        // A chunk deleted earlier in this commit may come back elsewhere (a move): `live` holds
        // it, `closed` says it went.
        if (current(op.chunkId)) throw invalid(index, `chunk ${op.chunkId} already exists`);
        // A new chunk is in the flow; a chunk moved in this commit (deleted above) keeps its part.
        const movedFrom = live.get(op.chunkId);
        const html = checkedHtml(op.html, op.chunkId, movedFrom ? (partOf(movedFrom.html) ?? null) : null);
        let position = chainKeys.get(index);
        if (position === undefined || current(op.afterChunkId ?? "") === undefined) {
          let lower: string | null = null;
          if (op.afterChunkId) {
            // An anchor another session deleted since the base still has its place in the order.
            const anchor = current(op.afterChunkId) ?? (await lastRevision(trx, doc.id, op.afterChunkId));
            if (!anchor) throw invalid(index, `unknown chunk ${op.afterChunkId}`);
            lower = anchor.position;
          }
          const stored = await nextStored(lower);
          let upper = stored;
          for (const p of newPositions) if ((lower === null || p > lower) && (upper === null || p < upper)) upper = p;
          // A run of inserts each after the one before (a pasted block, a save's new paragraphs)
          // gets its keys in one call: evenly spread, short keys, instead of halving the gap
          // once per insert (keys a character longer every few inserts).
          const run = chainLength(operations, index);
          const keys = generateNKeysBetween(lower, upper, run);
          for (let k = 1; k < run; k++) chainKeys.set(index + k, keys[k]);
          position = keys[0];
        }
        newPositions.push(position);
        const row: ChunkRevisionRow = {
          document_id: doc.id,
          chunk_id: op.chunkId,
          position,
          html,
          valid_from: seq,
          valid_to: null,
        };
        closed.delete(op.chunkId);
        inserts.delete(op.chunkId);
        created.set(op.chunkId, row);
        inserts.set(op.chunkId, row);
        changes.push({
          changeId: randomUUID(),
          operation: "create",
          chunkId: op.chunkId,
          documentId: doc.id,
          oldHtml: "",
          newHtml: html,
          aiExplanation: op.explanation,
          insertAfterChunkId: op.afterChunkId ?? "",
        });
        continue;
      }
      const prev = current(op.chunkId);
      if (!prev) throw invalid(index, `unknown chunk ${op.chunkId}`);
      if (op.kind === "delete") {
        closed.add(op.chunkId);
        created.delete(op.chunkId);
        changes.push({
          changeId: randomUUID(),
          operation: "delete",
          chunkId: op.chunkId,
          documentId: doc.id,
          oldHtml: prev.html,
          newHtml: "",
          aiExplanation: op.explanation,
          insertAfterChunkId: "",
        });
        continue;
      }
      // An edit cannot turn a chunk into a header, footer, note list or comment it was not.
      const html = checkedHtml(op.html, op.chunkId, partOf(prev.html) ?? null);
      const row: ChunkRevisionRow = { ...prev, html, valid_from: seq, valid_to: null };
      inserts.set(op.chunkId, row);
      created.set(op.chunkId, row);
      changes.push({
        changeId: randomUUID(),
        operation: "edit",
        chunkId: op.chunkId,
        documentId: doc.id,
        oldHtml: prev.html,
        newHtml: html,
        aiExplanation: op.explanation,
        insertAfterChunkId: "",
      });
    } catch (err) {
      if (err instanceof ChunkError) throw invalid(index, err.message);
      throw err;
    }
  }

  // Every stored chunk that was revised, moved or deleted gets its live row closed at this version.
  const toClose = [...live.keys()].filter((id) => closed.has(id) || created.has(id));
  await closeRevisions(trx, doc.id, toClose, seq);
  await insertRevisions(
    trx,
    [...inserts.values()].filter((r) => !closed.has(r.chunk_id)),
  );
  const versionId = randomUUID();
  await insertVersion(trx, {
    id: versionId,
    document_id: doc.id,
    seq,
    parent_id: doc.head_version_id,
    session_id: input.sessionId,
    kind: "edit",
    summary: input.summary.slice(0, 500),
    idempotency_key: input.idempotencyKey || null,
  });
  let chunkCount = doc.chunk_count;
  let sectionCount = doc.section_count;
  for (const c of changes) {
    if (c.operation !== "create") chunkCount -= 1;
    if (c.operation !== "delete") chunkCount += 1;
    if (c.oldHtml && isHeadingHtml(c.oldHtml)) sectionCount -= 1;
    if (c.newHtml && isHeadingHtml(c.newHtml)) sectionCount += 1;
  }
  await updateHead(trx, doc.id, { versionId, seq, chunkCount, sectionCount });
  await appendOutbox(trx, {
    event_type: "document_updated",
    owner_id: ownerId,
    document_id: doc.id,
    version_id: versionId,
    session_id: input.sessionId,
    payload: {
      kind: input.eventKind ?? "edit",
      chunk_ids: [...new Set(changes.map((c) => c.chunkId))],
      summary: input.summary.slice(0, 500),
    },
  });
  const row = (await findDocument(trx, ownerId, doc.id)) as DocumentRow;
  const chunks = input.returnChunks
    ? (await chunksAt(trx, doc.id)).map((r) => ({ chunkId: r.chunk_id, html: r.html }))
    : [];
  return { row, changes, chunks, merged, mergedChunkIds, conflicts, committed: true, replayed: false };
}
