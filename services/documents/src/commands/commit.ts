// Committing a turn's chunk operations as one version, writing O(k) rows for k operations.
import { randomUUID } from "node:crypto";
import { ChunkError, type ChunkOperation, type ChunkRecord, validateChunkHtml } from "@redline/html-chunks";
import { ConflictError, InputError, type Knex, NotFoundError } from "@redline/service-kit";
import { generateKeyBetween } from "fractional-indexing";
import {
  appendOutbox,
  chunksAt,
  chunksChangedSince,
  closeRevisions,
  findDocument,
  findVersion,
  insertRevisions,
  insertVersion,
  isHeadingHtml,
  liveChunks,
  nextLivePosition,
  updateHead,
} from "../store.js";
import type { ChunkRevisionRow, DocumentRow } from "../tables.js";

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

/** The result of a commit. */
export interface CommitResult {
  row: DocumentRow;
  changes: ChangeRecordView[];
  /** Head chunks when asked for. */
  chunks: ChunkRecord[];
  /** True when head had moved past the base version and the operations were merged onto it. */
  merged: boolean;
}

function invalid(index: number, message: string): InputError {
  return new InputError(`operation ${index}: ${message}`, { code: "invalid_operation", operation_index: index });
}

/**
 * Validates and commits `operations` on top of head as one version, with a `document_updated`
 * outbox event in the same transaction. Operations computed on an older base merge when they
 * touch chunks nobody changed since; otherwise ConflictError (409, code `chunk_conflict`,
 * naming the chunks) and nothing is written. InputError (400) names an invalid operation.
 */
export async function commitOperations(
  db: Knex,
  ownerId: string,
  input: {
    documentId: string;
    baseVersionId: string;
    sessionId: string;
    operations: ChunkOperation[];
    summary: string;
    returnChunks: boolean;
  },
): Promise<CommitResult> {
  if (input.operations.length === 0) throw new InputError("no operations to commit");
  return db.transaction(async (trx) => {
    const doc = await findDocument(trx, ownerId, input.documentId, true);
    if (!doc) throw new NotFoundError("Document not found");
    let merged = false;
    const targets = input.operations.filter((op) => op.kind !== "insert").map((op) => op.chunkId);
    if (input.baseVersionId && input.baseVersionId !== doc.head_version_id) {
      const base = await findVersion(trx, doc.id, input.baseVersionId);
      if (!base) throw new InputError("base_version_id is not a version of this document");
      const changed = await chunksChangedSince(trx, doc.id, base.seq);
      const anchors = input.operations.flatMap((op) =>
        op.kind === "insert" && op.afterChunkId ? [op.afterChunkId] : [],
      );
      const clashes = [...new Set([...targets, ...anchors].filter((id) => changed.has(id)))];
      if (clashes.length > 0) {
        throw new ConflictError(`Chunks changed by another session since your version: ${clashes.join(", ")}`, {
          code: "chunk_conflict",
          chunk_ids: clashes,
          head_version_id: doc.head_version_id,
        });
      }
      merged = true;
    }

    const seq = doc.head_seq + 1;
    const live = new Map(
      (
        await liveChunks(trx, doc.id, [
          ...new Set(
            targets.concat(
              input.operations.flatMap((op) => (op.kind === "insert" && op.afterChunkId ? [op.afterChunkId] : [])),
            ),
          ),
        ])
      ).map((r) => [r.chunk_id, r]),
    );
    // Chunks created by this commit, with their positions, so later inserts can anchor on them.
    const created = new Map<string, ChunkRevisionRow>();
    const closed = new Set<string>();
    const inserts: ChunkRevisionRow[] = [];
    const changes: ChangeRecordView[] = [];

    const current = (id: string) => (closed.has(id) ? undefined : (created.get(id) ?? live.get(id)));
    for (const [index, op] of input.operations.entries()) {
      try {
        if (op.kind === "insert") {
          if (current(op.chunkId) || (await liveChunks(trx, doc.id, [op.chunkId])).length > 0)
            throw invalid(index, `chunk ${op.chunkId} already exists`);
          const html = validateChunkHtml(op.html, op.chunkId);
          const anchor = op.afterChunkId ? current(op.afterChunkId) : null;
          if (op.afterChunkId && !anchor) throw invalid(index, `unknown chunk ${op.afterChunkId}`);
          const lower = anchor?.position ?? null;
          const stored = await nextLivePosition(trx, doc.id, lower);
          const pending = [...created.values()]
            .map((r) => r.position)
            .filter((p) => (lower === null || p > lower) && (stored === null || p < stored));
          const upper = pending.length > 0 ? pending.sort()[0] : stored;
          const row: ChunkRevisionRow = {
            document_id: doc.id,
            chunk_id: op.chunkId,
            position: generateKeyBetween(lower, upper),
            html,
            valid_from: seq,
            valid_to: null,
          };
          created.set(op.chunkId, row);
          inserts.push(row);
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
        const html = validateChunkHtml(op.html, op.chunkId);
        const row: ChunkRevisionRow = { ...prev, html, valid_from: seq, valid_to: null };
        if (!created.has(op.chunkId)) inserts.push(row);
        else inserts[inserts.findIndex((r) => r.chunk_id === op.chunkId)] = row;
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

    // Every stored chunk that was revised or deleted gets its live row closed at this version.
    const toClose = [...live.keys()].filter((id) => closed.has(id) || created.has(id));
    await closeRevisions(trx, doc.id, toClose, seq);
    await insertRevisions(
      trx,
      inserts.filter((r) => !closed.has(r.chunk_id)),
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
        kind: "edit",
        chunk_ids: [...new Set(changes.map((c) => c.chunkId))],
        summary: input.summary.slice(0, 500),
      },
    });
    const row = (await findDocument(trx, ownerId, doc.id)) as DocumentRow;
    const chunks = input.returnChunks
      ? (await chunksAt(trx, doc.id)).map((r) => ({ chunkId: r.chunk_id, html: r.html }))
      : [];
    return { row, changes, chunks, merged };
  });
}
