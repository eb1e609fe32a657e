// A turn's net operations as the rest of the system sees them: proto operations for documents,
// summaries, change records for approval, and the sections they touch (billing).
import { randomBytes, randomUUID } from "node:crypto";
import { documentsV1 } from "@redline/grpc-stubs";
import type { ChunkOperation, WorkingDocument } from "@redline/html-chunks";
import type { StagedChange } from "../db/tables.js";

const OP_KIND = {
  replace: documentsV1.OperationKind.OPERATION_KIND_REPLACE,
  insert: documentsV1.OperationKind.OPERATION_KIND_INSERT,
  delete: documentsV1.OperationKind.OPERATION_KIND_DELETE,
} as const;

const OPERATION_NAME = { replace: "edit", insert: "create", delete: "delete" } as const;

/** The documents service's operation from a html-chunks operation. */
export function chunkOpToProto(op: ChunkOperation): documentsV1.ChunkOperation {
  return {
    kind: OP_KIND[op.kind],
    chunkId: op.chunkId,
    html: op.kind === "delete" ? "" : op.html,
    afterChunkId: op.kind === "insert" ? (op.afterChunkId ?? "") : "",
    explanation: op.explanation,
  };
}

/** Sections of the base and of the result: heading chunk id (or `b:lead`/`r:lead`) and chunks. */
function* sectionsOfBoth(base: WorkingDocument, result: WorkingDocument) {
  for (const [label, doc] of [
    ["b", base],
    ["r", result],
  ] as const) {
    for (const s of doc.sections()) yield { key: s.headingChunkId ?? `${label}:lead`, chunkIds: s.chunkIds };
  }
}

/** Heading-anchored sections touched by the operations, counted on the base and the result (at least 1). */
export function sectionsChanged(base: WorkingDocument, result: WorkingDocument, ops: ChunkOperation[]): number {
  const touched = new Set(ops.map((op) => op.chunkId));
  const keys = new Set<string>();
  for (const s of sectionsOfBoth(base, result)) if (s.chunkIds.some((id) => touched.has(id))) keys.add(s.key);
  return Math.max(1, keys.size);
}

/** The section each staged change falls in (on the base, else the result), by change id. */
export function sectionKeys(records: StagedChange[], base: WorkingDocument, working: WorkingDocument) {
  const sectionOf = new Map<string, string>();
  for (const s of sectionsOfBoth(base, working))
    for (const id of s.chunkIds) if (!sectionOf.has(id)) sectionOf.set(id, s.key);
  return Object.fromEntries(records.map((r) => [r.change_id, sectionOf.get(r.chunk_id) ?? r.chunk_id]));
}

/** One-line summary of operations ("2 chunks edited, 1 chunk added"; "No changes"). */
export function summarizeOperations(ops: ChunkOperation[]): string {
  if (ops.length === 0) return "No changes";
  const n = (kind: ChunkOperation["kind"]) => ops.filter((o) => o.kind === kind).length;
  const parts = [
    [n("replace"), "edited"],
    [n("insert"), "added"],
    [n("delete"), "deleted"],
  ]
    .filter(([count]) => (count as number) > 0)
    .map(([count, verb]) => `${count} chunk${count === 1 ? "" : "s"} ${verb}`);
  return parts.join(", ");
}

/** Change records of a turn's net operations (one batch), read from the base and the working copy. */
export function stageRecords(
  ops: ChunkOperation[],
  base: WorkingDocument,
  working: WorkingDocument,
  documentId: string,
): StagedChange[] {
  const batchId = `batch_${randomBytes(6).toString("hex")}`;
  return ops.map((op) => ({
    change_id: randomUUID(),
    operation: OPERATION_NAME[op.kind],
    chunk_id: op.chunkId,
    document_id: documentId,
    old_html: op.kind === "insert" || !base.has(op.chunkId) ? "" : base.get(op.chunkId).html,
    new_html: op.kind === "delete" ? "" : working.has(op.chunkId) ? working.get(op.chunkId).html : op.html,
    ai_explanation: op.explanation,
    insert_after_chunk_id: op.kind === "insert" ? (op.afterChunkId ?? "") : "",
    batch_id: batchId,
    batch_total: ops.length,
  }));
}
