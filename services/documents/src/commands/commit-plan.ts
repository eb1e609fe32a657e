// Turning chunk operations into the revision rows of one version, O(k) for k operations: which
// live rows close, which rows are inserted (with fractional positions), and the change records.
import { randomUUID } from "node:crypto";
import { ChunkError, type ChunkOperation, partOf, validateChunkHtml } from "@redline/html-chunks";
import { InputError, type Knex } from "@redline/service-kit";
import { generateNKeysBetween } from "fractional-indexing";
import { lastRevision, liveChunks, livePositions, nextLivePosition } from "../db/store/revisions.js";
import type { ChunkRevisionRow } from "../db/tables.js";

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

/** The rows one version writes and the changes it reports. */
export interface RevisionPlan {
  documentId: string;
  /** The version being written. */
  seq: number;
  /** Skip revalidating HTML that chunkHtml produced in this process (a save's diff). */
  normalized: boolean;
  /** Stored live rows of every chunk the operations name. */
  live: Map<string, ChunkRevisionRow>;
  /** Chunks created or revised by this version, with their positions (later inserts anchor on them). */
  created: Map<string, ChunkRevisionRow>;
  /** Chunks deleted by this version (a later insert of the same id is a move). */
  closed: Set<string>;
  /** Rows to insert by chunk id: a later operation on the same chunk replaces its row. */
  inserts: Map<string, ChunkRevisionRow>;
  changes: ChangeRecordView[];
}

type InsertOperation = Extract<ChunkOperation, { kind: "insert" }>;

/** Where inserts go: the version's operations, stored positions, keys of runs already drawn, and the keys taken so far. */
interface InsertKeys {
  operations: ChunkOperation[];
  nextStored: (after: string | null) => Promise<string | null>;
  /** The most recent revision of a chunk, live or closed. */
  lastRevision: (chunkId: string) => Promise<ChunkRevisionRow | undefined>;
  /** Keys drawn for later inserts of a run, by operation index. */
  chain: Map<number, string>;
  /** Positions taken by inserts of this version (a later insert's upper bound may be one). */
  taken: string[];
}

/** An InputError naming the operation (400 `invalid_operation`). */
export function invalidOperation(index: number, message: string): InputError {
  return new InputError(`operation ${index}: ${message}`, { code: "invalid_operation", operation_index: index });
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

/** The chunk as this version has it so far: created or revised here, else stored live, unless deleted here. */
function current(plan: RevisionPlan, id: string): ChunkRevisionRow | undefined {
  return plan.closed.has(id) ? undefined : (plan.created.get(id) ?? plan.live.get(id));
}

/**
 * The HTML to store. Normalized input (a save's chunkHtml output) skips revalidation unless its
 * part mark is not the one this chunk may carry; then validation strips it.
 */
function checkedHtml(plan: RevisionPlan, html: string, id: string, part: string | null): string {
  return plan.normalized && (partOf(html) ?? null) === part ? html : validateChunkHtml(html, id, { part });
}

function record(
  plan: RevisionPlan,
  op: ChunkOperation,
  change: Omit<ChangeRecordView, "changeId" | "documentId" | "aiExplanation">,
) {
  plan.changes.push({ changeId: randomUUID(), documentId: plan.documentId, ...change, aiExplanation: op.explanation });
}

/** The position of an insert's anchor (null at the start); an anchor deleted since the base keeps its place. */
async function anchorPosition(
  plan: RevisionPlan,
  keys: InsertKeys,
  op: InsertOperation,
  index: number,
): Promise<string | null> {
  if (!op.afterChunkId) return null;
  const anchor = current(plan, op.afterChunkId) ?? (await keys.lastRevision(op.afterChunkId));
  if (!anchor) throw invalidOperation(index, `unknown chunk ${op.afterChunkId}`);
  return anchor.position;
}

/**
 * The position of the insert at `index`. A run of inserts each after the one before (a pasted
 * block, a save's new paragraphs) gets its keys in one call: evenly spread, short keys, instead
 * of halving the gap once per insert (keys a character longer every few inserts).
 */
async function insertPosition(
  plan: RevisionPlan,
  keys: InsertKeys,
  op: InsertOperation,
  index: number,
): Promise<string> {
  let position = keys.chain.get(index);
  if (position === undefined || current(plan, op.afterChunkId ?? "") === undefined) {
    const lower = await anchorPosition(plan, keys, op, index);
    let upper = await keys.nextStored(lower);
    for (const p of keys.taken) if ((lower === null || p > lower) && (upper === null || p < upper)) upper = p;
    const run = chainLength(keys.operations, index);
    const drawn = generateNKeysBetween(lower, upper, run);
    for (let k = 1; k < run; k++) keys.chain.set(index + k, drawn[k]);
    position = drawn[0];
  }
  keys.taken.push(position);
  return position;
}

/** Plans the insert at `index`: a new chunk, or one deleted earlier in this version coming back (a move). */
async function planInsert(plan: RevisionPlan, keys: InsertKeys, op: InsertOperation, index: number): Promise<void> {
  if (current(plan, op.chunkId)) throw invalidOperation(index, `chunk ${op.chunkId} already exists`);
  // A new chunk is in the flow; a chunk moved in this version (deleted above) keeps its part.
  const movedFrom = plan.live.get(op.chunkId);
  const html = checkedHtml(plan, op.html, op.chunkId, movedFrom ? (partOf(movedFrom.html) ?? null) : null);
  const position = await insertPosition(plan, keys, op, index);
  const row: ChunkRevisionRow = {
    document_id: plan.documentId,
    chunk_id: op.chunkId,
    position,
    html,
    valid_from: plan.seq,
    valid_to: null,
  };
  plan.closed.delete(op.chunkId);
  plan.inserts.delete(op.chunkId);
  plan.created.set(op.chunkId, row);
  plan.inserts.set(op.chunkId, row);
  const insertAfterChunkId = op.afterChunkId ?? "";
  record(plan, op, { operation: "create", chunkId: op.chunkId, oldHtml: "", newHtml: html, insertAfterChunkId });
}

/** Plans a replace or delete of a chunk this version has. */
function planEdit(plan: RevisionPlan, op: Exclude<ChunkOperation, InsertOperation>, index: number): void {
  const prev = current(plan, op.chunkId);
  if (!prev) throw invalidOperation(index, `unknown chunk ${op.chunkId}`);
  const base = { chunkId: op.chunkId, oldHtml: prev.html, insertAfterChunkId: "" };
  if (op.kind === "delete") {
    plan.closed.add(op.chunkId);
    plan.created.delete(op.chunkId);
    record(plan, op, { ...base, operation: "delete", newHtml: "" });
    return;
  }
  // An edit cannot turn a chunk into a header, footer, note list or comment it was not.
  const html = checkedHtml(plan, op.html, op.chunkId, partOf(prev.html) ?? null);
  const row: ChunkRevisionRow = { ...prev, html, valid_from: plan.seq, valid_to: null };
  plan.inserts.set(op.chunkId, row);
  plan.created.set(op.chunkId, row);
  record(plan, op, { ...base, operation: "edit", newHtml: html });
}

/**
 * Plans `operations` in order as version `seq` of the document: one read of the live rows of
 * every chunk they name (inserted ids too: an insert of a live chunk not deleted earlier in
 * this version is refused), then each operation against what the ones before it did.
 * InputError (400 `invalid_operation`) names an operation on an unknown chunk, a duplicate
 * insert or invalid HTML.
 */
export async function planRevisions(
  trx: Knex.Transaction,
  documentId: string,
  seq: number,
  operations: ChunkOperation[],
  normalized: boolean,
): Promise<RevisionPlan> {
  const named = operations.flatMap((op) =>
    op.kind === "insert" ? [op.chunkId, ...(op.afterChunkId ? [op.afterChunkId] : [])] : [op.chunkId],
  );
  const live = new Map((await liveChunks(trx, documentId, [...new Set(named)])).map((r) => [r.chunk_id, r]));
  const plan: RevisionPlan = {
    documentId,
    seq,
    normalized,
    live,
    created: new Map(),
    closed: new Set(),
    inserts: new Map(),
    changes: [],
  };
  const insertCount = operations.filter((op) => op.kind === "insert").length;
  const keys: InsertKeys = {
    operations,
    nextStored: await nextStoredPosition(trx, documentId, insertCount),
    lastRevision: (chunkId) => lastRevision(trx, documentId, chunkId),
    chain: new Map(),
    taken: [],
  };
  for (const [index, op] of operations.entries()) {
    try {
      if (op.kind === "insert") await planInsert(plan, keys, op, index);
      else planEdit(plan, op, index);
    } catch (err) {
      if (err instanceof ChunkError) throw invalidOperation(index, err.message);
      throw err;
    }
  }
  return plan;
}

/** Live rows to close at this version: every stored chunk that was revised, moved or deleted. */
export function rowsToClose(plan: RevisionPlan): string[] {
  return [...plan.live.keys()].filter((id) => plan.closed.has(id) || plan.created.has(id));
}

/** Rows to insert: the last revision of each chunk this version wrote and did not delete. */
export function rowsToInsert(plan: RevisionPlan): ChunkRevisionRow[] {
  return [...plan.inserts.values()].filter((r) => !plan.closed.has(r.chunk_id));
}
