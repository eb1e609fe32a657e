// A human save (endpoint 11): the edited HTML is diffed against its base version chunk by chunk
// and committed as the operations that differ, so a save merges with other sessions' commits
// exactly like an AI edit does, and writes only the chunks it changed.
import { createHash } from "node:crypto";
import { type ChunkOperation, type ChunkRecord, chunkHtml, partOf, seededChunkIds } from "@redline/html-chunks";
import { InputError, type Knex, NotFoundError } from "@redline/service-kit";
import { findDocument } from "../db/store/documents.js";
import { chunkRecordsAt } from "../db/store/revisions.js";
import { findVersion } from "../db/store/versions.js";
import type { DocumentRow, VersionAuthor } from "../db/tables.js";
import { commitOperations } from "./commit.js";
import { getDocument, SNAPSHOT } from "./read.js";

/** Indexes of a longest strictly increasing subsequence of `values` (O(n log n)). */
export function longestIncreasing(values: number[]): Set<number> {
  const tails: number[] = [];
  const prev = new Array<number>(values.length).fill(-1);
  for (const [i, v] of values.entries()) {
    let lo = 0;
    let hi = tails.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (values[tails[mid]] < v) lo = mid + 1;
      else hi = mid;
    }
    if (lo > 0) prev[i] = tails[lo - 1];
    tails[lo] = i;
  }
  const keep = new Set<number>();
  for (let i = tails.at(-1) ?? -1; i >= 0; i = prev[i]) keep.add(i);
  return keep;
}

/**
 * The chunk operations turning `base` into `next`: deletes of chunks gone, replaces of chunks
 * whose HTML changed, inserts of new chunks after their predecessor, and delete + insert for
 * chunks that moved (those outside a longest run that kept its order).
 */
export function diffChunks(base: ChunkRecord[], next: ChunkRecord[]): ChunkOperation[] {
  const baseIndex = new Map(base.map((c, i) => [c.chunkId, i]));
  const baseHtml = new Map(base.map((c) => [c.chunkId, c.html]));
  const nextIds = new Set(next.map((c) => c.chunkId));
  const retained = next.filter((c) => baseIndex.has(c.chunkId));
  const stable = longestIncreasing(retained.map((c) => baseIndex.get(c.chunkId) as number));
  const stayed = new Set([...stable].map((i) => retained[i].chunkId));
  const ops: ChunkOperation[] = [];
  for (const c of base) {
    if (!nextIds.has(c.chunkId) || !stayed.has(c.chunkId))
      ops.push({ kind: "delete", chunkId: c.chunkId, explanation: "saved by the user" });
  }
  let previous: string | null = null;
  for (const c of next) {
    if (!stayed.has(c.chunkId)) {
      ops.push({
        kind: "insert",
        chunkId: c.chunkId,
        html: c.html,
        afterChunkId: previous,
        explanation: "saved by the user",
      });
    } else if (baseHtml.get(c.chunkId) !== c.html) {
      ops.push({ kind: "replace", chunkId: c.chunkId, html: c.html, explanation: "saved by the user" });
    }
    previous = c.chunkId;
  }
  return ops;
}

/**
 * Sanitizes and chunks a save's HTML against its base: a client sends back the ids (and part
 * marks) it received, so an id the base does not have (another document's, invented, or a
 * duplicate) is minted afresh, and a chunk keeps a `data-part` only when the base chunk of that
 * id carries the same one; new chunks are always in the flow. With `seed`, a new chunk's id is
 * derived from it and the chunk's HTML (reseedNewIds), else random.
 */
export function saveChunks(html: string, base: ChunkRecord[], seed?: string): ChunkRecord[] {
  const parts = new Map<string, string>();
  for (const c of base) {
    const part = partOf(c.html);
    if (part !== undefined) parts.set(c.chunkId, part);
  }
  const known = new Set(base.map((c) => c.chunkId));
  const chunks = chunkHtml(html, { knownIds: known, parts }).chunks;
  return seed === undefined ? chunks : reseedNewIds(chunks, known, seed);
}

/**
 * Gives each chunk not in `known` an id derived from `seed`, its HTML and how often that HTML
 * came before it: the same new paragraph sent again from the same base gets the same id, and
 * two different ones never share one. A derived id already taken keeps the minted one.
 */
function reseedNewIds(chunks: ChunkRecord[], known: ReadonlySet<string>, seed: string): ChunkRecord[] {
  const taken = new Set(chunks.map((c) => c.chunkId));
  const occurrences = new Map<string, number>();
  return chunks.map((c) => {
    if (known.has(c.chunkId)) return c;
    const attribute = `data-chunk-id="${c.chunkId}"`;
    const body = c.html.replace(attribute, 'data-chunk-id=""');
    const n = occurrences.get(body) ?? 0;
    occurrences.set(body, n + 1);
    const digest = createHash("sha256").update(body).digest("hex");
    const id = seededChunkIds(`${seed}:${digest}:${n}`)();
    if (taken.has(id)) return c;
    taken.add(id);
    return { chunkId: id, html: c.html.replace(attribute, `data-chunk-id="${id}"`) };
  });
}

/** What a save did: the row after it, the chunks it changed, whether it merged, and head's chunks. */
export interface SaveResult {
  row: DocumentRow;
  changedChunkIds: string[];
  merged: boolean;
  chunks: ChunkRecord[];
}

/**
 * Saves the user's edited HTML (sanitized and chunked by saveChunks) as one version, based on
 * `baseVersionId` (head when empty): chunks the save changed against its base are committed on
 * head; when another session changed one of the same chunks since the base, ConflictError 409
 * `chunk_conflict` names them, records the conflicts and writes nothing. A save that changes
 * nothing writes nothing. With `baseIsLastSeen` the base is the session's last-seen record, and
 * the session's own saves since it do not clash with this one (commitOperations'
 * `supersedeOwnSaves`): the record may have missed a save whose answer was lost.
 * InputError when the base is not a version of the document; NotFoundError for another owner's id.
 */
export async function saveDocument(
  db: Knex,
  ownerId: string,
  input: {
    documentId: string;
    html: string;
    baseVersionId: string;
    sessionId: string;
    /** `baseVersionId` is the session's last-seen record, not the client's word. */
    baseIsLastSeen?: boolean;
    author?: VersionAuthor;
    /** The saving RPC's span (traceparentOf(call.trace)), for the event's publish. */
    traceparent?: string | null;
  },
): Promise<SaveResult> {
  // The base is read in one snapshot: head's version id and the live chunks belong together.
  const { doc, seq, base } = await db.transaction(async (trx) => {
    const found = await findDocument(trx, ownerId, input.documentId);
    if (!found) throw new NotFoundError("Document not found");
    let baseSeq: number | undefined;
    if (input.baseVersionId && input.baseVersionId !== found.head_version_id) {
      const version = await findVersion(trx, found.id, input.baseVersionId);
      if (!version) throw new InputError("base_version_id is not a version of this document");
      baseSeq = version.seq;
    }
    return { doc: found, seq: baseSeq, base: await chunkRecordsAt(trx, found.id, baseSeq) };
  }, SNAPSHOT);
  const baseVersionId = input.baseVersionId || doc.head_version_id;
  // New chunks get ids seeded by session, base and content: a save retried after its answer was
  // lost names the chunks its first attempt added, and the commit finds them, not adds twice.
  const next = saveChunks(input.html, base, `save:${doc.id}:${baseVersionId}:${input.sessionId}`);
  const ops = diffChunks(base, next);
  // Nothing written: the answer is head as it is now.
  const unchanged = async (merged: boolean): Promise<SaveResult> => {
    const head = await getDocument(db, ownerId, { documentId: doc.id, includeChunks: true });
    return { row: head.row, changedChunkIds: [], merged, chunks: head.chunks };
  };
  if (ops.length === 0) {
    if (seq === undefined) return { row: doc, changedChunkIds: [], merged: false, chunks: base };
    return unchanged(false);
  }
  const result = await commitOperations(db, ownerId, {
    documentId: doc.id,
    baseVersionId,
    sessionId: input.sessionId,
    operations: ops,
    supersedeOwnSaves: input.baseIsLastSeen,
    summary: "saved by the user",
    // Saved on head itself, the new head is exactly the saved chunks: no read back needed.
    returnChunks: seq !== undefined,
    writer: "save",
    eventKind: "save",
    author: input.author,
    traceparent: input.traceparent,
    normalized: true,
  });
  // Every operation was already at head (a retried save).
  if (!result.committed) return unchanged(result.merged);
  let chunks = seq !== undefined ? result.chunks : next;
  if (seq === undefined && result.merged) {
    // Another commit landed between the read and this one: read exactly the version written.
    chunks = await chunkRecordsAt(db, doc.id, result.row.head_seq);
  }
  return {
    row: result.row,
    // What the commit wrote: an operation the three-way check found already at head is not a change.
    changedChunkIds: [...new Set(result.changes.map((c) => c.chunkId))],
    merged: result.merged,
    chunks,
  };
}
