// Loading HTML into documents: create a document, or replace one's content as a new version.
import { randomUUID } from "node:crypto";
import { type ChunkRecord, chunkHtml, sections, textOf } from "@redline/html-chunks";
import { type Knex, NotFoundError } from "@redline/service-kit";
import { generateKeyBetween, generateNKeysBetween } from "fractional-indexing";
import {
  appendOutbox,
  chunksAt,
  closeRevisions,
  findDocument,
  insertDocument,
  insertRevisions,
  insertVersion,
  isHeadingHtml,
  updateHead,
} from "../store.js";
import type { ChunkRevisionRow, DocumentRow } from "../tables.js";

/** A document as returned by the commands: its row and (when read) its chunks in order. */
export interface DocumentView {
  row: DocumentRow;
  chunks: ChunkRecord[];
  /** The version the chunks belong to. */
  versionId: string;
}

/** Title from the first heading, else the first words of the text, else "Untitled document". */
export function deriveTitle(chunks: ChunkRecord[]): string {
  const heading = sections(chunks).find((s) => s.headingChunkId !== null && s.title.trim());
  if (heading) return heading.title.trim().slice(0, 200);
  const first = chunks.map((c) => textOf(c.html).trim()).find(Boolean);
  return first ? first.split(/\s+/).slice(0, 8).join(" ").slice(0, 200) : "Untitled document";
}

/**
 * Creates a document from raw HTML (sanitized and chunked) as version 1, with a
 * `document_created` outbox event in the same transaction.
 */
export async function createDocument(
  db: Knex,
  ownerId: string,
  input: { html: string; title?: string; pageSetup?: Record<string, unknown> | null; sessionId: string },
): Promise<DocumentView> {
  const { chunks } = chunkHtml(input.html);
  const id = randomUUID();
  const versionId = randomUUID();
  const positions = generateNKeysBetween(null, null, chunks.length);
  return db.transaction(async (trx) => {
    const title = input.title?.trim() || deriveTitle(chunks);
    await insertDocument(trx, {
      id,
      owner_id: ownerId,
      title,
      page_setup: input.pageSetup ?? null,
      head_version_id: versionId,
      head_seq: 1,
      chunk_count: chunks.length,
      section_count: chunks.filter((c) => isHeadingHtml(c.html)).length,
    });
    await insertVersion(trx, {
      id: versionId,
      document_id: id,
      seq: 1,
      parent_id: null,
      session_id: input.sessionId,
      kind: "create",
      summary: "created",
    });
    await insertRevisions(
      trx,
      chunks.map((c, i) => ({
        document_id: id,
        chunk_id: c.chunkId,
        position: positions[i],
        html: c.html,
        valid_from: 1,
        valid_to: null,
      })),
    );
    await appendOutbox(trx, {
      event_type: "document_created",
      owner_id: ownerId,
      document_id: id,
      version_id: versionId,
      session_id: input.sessionId,
      payload: { title, chunk_count: chunks.length },
    });
    const row = (await findDocument(trx, ownerId, id)) as DocumentRow;
    return { row, chunks, versionId };
  });
}

/**
 * Positions for `next` given the live rows: chunks that keep their id keep their row when
 * their HTML is unchanged and their relative order holds; otherwise every chunk is re-keyed.
 */
function planReplace(
  live: { chunk_id: string; html: string; position: string }[],
  next: ChunkRecord[],
): { keep: Set<string>; positions: Map<string, string> } {
  const liveById = new Map(live.map((r) => [r.chunk_id, r]));
  const retained = next.filter((c) => liveById.has(c.chunkId));
  const monotonic = retained.every(
    (c, i) =>
      i === 0 || (liveById.get(retained[i - 1].chunkId)?.position ?? "") < (liveById.get(c.chunkId)?.position ?? ""),
  );
  const positions = new Map<string, string>();
  if (!monotonic) {
    const keys = generateNKeysBetween(null, null, next.length);
    for (const [i, c] of next.entries()) positions.set(c.chunkId, keys[i]);
    return { keep: new Set(), positions };
  }
  // Fill each run of new chunks between retained anchors with keys strictly between them.
  let run: ChunkRecord[] = [];
  let lower: string | null = null;
  const flush = (upper: string | null) => {
    if (run.length === 0) return;
    const keys = generateNKeysBetween(lower, upper, run.length);
    for (const [i, c] of run.entries()) positions.set(c.chunkId, keys[i]);
    run = [];
  };
  for (const c of next) {
    const old = liveById.get(c.chunkId);
    if (!old) {
      run.push(c);
      continue;
    }
    flush(old.position);
    positions.set(c.chunkId, old.position);
    lower = old.position;
  }
  flush(null);
  const keep = new Set(next.filter((c) => liveById.get(c.chunkId)?.html === c.html).map((c) => c.chunkId));
  return { keep, positions };
}

/**
 * Replaces a document's content verbatim as a new version. Chunks whose id and HTML are
 * unchanged keep their stored revision; the rest are revised, inserted or closed.
 * Throws NotFoundError for an unknown or foreign id.
 */
export async function replaceDocument(
  db: Knex,
  ownerId: string,
  input: {
    documentId: string;
    html: string;
    sessionId: string;
    title?: string;
    pageSetup?: Record<string, unknown> | null;
  },
): Promise<DocumentView> {
  const { chunks } = chunkHtml(input.html);
  return db.transaction(async (trx) => {
    const doc = await findDocument(trx, ownerId, input.documentId, true);
    if (!doc) throw new NotFoundError("Document not found");
    const live = await chunksAt(trx, doc.id);
    const { keep, positions } = planReplace(live, chunks);
    const seq = doc.head_seq + 1;
    const versionId = randomUUID();
    const nextIds = new Set(chunks.map((c) => c.chunkId));
    const toClose = live.filter((r) => !keep.has(r.chunk_id) || !nextIds.has(r.chunk_id)).map((r) => r.chunk_id);
    await closeRevisions(trx, doc.id, toClose, seq);
    const rows: ChunkRevisionRow[] = chunks
      .filter((c) => !keep.has(c.chunkId))
      .map((c) => ({
        document_id: doc.id,
        chunk_id: c.chunkId,
        position: positions.get(c.chunkId) ?? generateKeyBetween(null, null),
        html: c.html,
        valid_from: seq,
        valid_to: null,
      }));
    await insertRevisions(trx, rows);
    await insertVersion(trx, {
      id: versionId,
      document_id: doc.id,
      seq,
      parent_id: doc.head_version_id,
      session_id: input.sessionId,
      kind: "replace",
      summary: "content replaced",
    });
    await updateHead(trx, doc.id, {
      versionId,
      seq,
      chunkCount: chunks.length,
      sectionCount: chunks.filter((c) => isHeadingHtml(c.html)).length,
      title: input.title?.trim() || undefined,
      pageSetup: input.pageSetup === undefined ? undefined : input.pageSetup,
    });
    await appendOutbox(trx, {
      event_type: "document_updated",
      owner_id: ownerId,
      document_id: doc.id,
      version_id: versionId,
      session_id: input.sessionId,
      payload: { kind: "replace", changed_chunks: new Set([...toClose, ...rows.map((r) => r.chunk_id)]).size },
    });
    const row = (await findDocument(trx, ownerId, doc.id)) as DocumentRow;
    return { row, chunks, versionId };
  });
}
