// The Files view: list, metadata, detail with structure, rename, archive state, and the outbox
// read as a poll feed. Another owner's ids read as unknown everywhere.
import { type ChunkRecord, headingLevel, tagOf, textOf } from "@redline/html-chunks";
import { type Knex, NotFoundError } from "@redline/service-kit";
import {
  findDocument,
  findDocuments,
  listDocuments as listRows,
  setArchived,
  updateMeta,
} from "../db/store/documents.js";
import { appendDocumentUpdated, eventsAfter } from "../db/store/outbox.js";
import { chunkRecordsAt, headChunks } from "../db/store/revisions.js";
import type { DocumentRow, OutboxRow } from "../db/tables.js";
import { SNAPSHOT } from "./read.js";

/** Chunks shown in a list preview. */
const PREVIEW_CHUNKS = 3;

/** A list entry: the row and, when asked, the first chunks' HTML. */
export interface ListedDocument {
  row: DocumentRow;
  previewHtml: string;
}

/**
 * A page of the owner's documents, most recently updated first (endpoint 3). Every document a
 * chat loaded is stored as a durable document when it is loaded, so earlier chats' documents are
 * already here: the spec's one-time import has nothing left to import.
 */
export async function listDocuments(
  db: Knex,
  ownerId: string,
  q: { limit: number; offset: number; archived: boolean; includePreview: boolean },
): Promise<{ documents: ListedDocument[]; total: number }> {
  const limit = Math.min(200, Math.max(1, q.limit || 50));
  const { rows, total } = await listRows(db, ownerId, { limit, offset: Math.max(0, q.offset), archived: q.archived });
  const documents = await Promise.all(
    rows.map(async (row) => ({
      row,
      previewHtml: q.includePreview ? (await headChunks(db, row.id, PREVIEW_CHUNKS)).map((c) => c.html).join("\n") : "",
    })),
  );
  return { documents, total };
}

/** Metadata of the owner's documents among `ids`, archived ones included. */
export function documentsMeta(db: Knex, ownerId: string, ids: string[]): Promise<DocumentRow[]> {
  return findDocuments(db, ownerId, ids);
}

/** The structure of a document (endpoint 5). */
export interface Structure {
  headings: { level: number; text: string; position: number; chunkId: string }[];
  sectionCount: number;
  blockCount: number;
  images: number;
  diagrams: number;
}

const count = (html: string, re: RegExp) => html.match(re)?.length ?? 0;
const DIAGRAM_TAG =
  /\sdata-diagram\b|\sclass="[^"]*\b(mermaid|diagram)\b|<img\b[^>]*\ssrc="[^"]*(\.svg\b|^data:image\/svg)/i;

/** Headings, section and block counts, and media counts of chunks in order. */
function structureOf(chunks: ChunkRecord[]): Structure {
  const headings: Structure["headings"] = [];
  let images = 0;
  let diagrams = 0;
  for (const [position, chunk] of chunks.entries()) {
    const level = headingLevel(tagOf(chunk.html));
    if (level > 0) headings.push({ level, text: textOf(chunk.html).trim(), position, chunkId: chunk.chunkId });
    images += count(chunk.html, /<img\b/gi);
    // Diagrams: elements marked as one (a mermaid block, data-diagram, an SVG image), counted per element.
    diagrams += (chunk.html.match(/<[a-zA-Z][^>]*>/g) ?? []).filter((tag) => DIAGRAM_TAG.test(tag)).length;
    count(chunk.html, /<(svg|canvas)\b/gi) + count(chunk.html, /\b(data-diagram|class="[^"]*\b(mermaid|diagram)\b)/gi);
  }
  return { headings, sectionCount: headings.length, blockCount: chunks.length, images, diagrams };
}

/** The document at head with its chunks and structure; NotFoundError when not the owner's. */
export async function describeDocument(
  db: Knex,
  ownerId: string,
  documentId: string,
): Promise<{ row: DocumentRow; chunks: ChunkRecord[]; structure: Structure }> {
  // One snapshot, so the head version and the chunks belong together.
  const { row, chunks } = await db.transaction(async (trx) => {
    const found = await findDocument(trx, ownerId, documentId);
    if (!found) throw new NotFoundError("Document not found");
    return { row: found, chunks: await chunkRecordsAt(trx, found.id) };
  }, SNAPSHOT);
  return { row, chunks, structure: structureOf(chunks) };
}

/** Who and what a metadata event is about: the document at its head version. */
function eventOf(row: DocumentRow, input: { sessionId: string; traceparent?: string | null }) {
  return {
    ownerId: row.owner_id,
    documentId: row.id,
    versionId: row.head_version_id,
    sessionId: input.sessionId,
    traceparent: input.traceparent,
  };
}

/**
 * Renames a document and/or sets its page setup (endpoint 6), with a `document_updated` event
 * (`payload.kind` "metadata") so other sessions refresh their titles. NotFoundError when not the owner's.
 */
export async function updateDocument(
  db: Knex,
  ownerId: string,
  input: {
    documentId: string;
    title?: string;
    pageSetup?: Record<string, unknown> | null;
    sessionId: string;
    /** The RPC's span (traceparentOf(call.trace)), for the event's publish. */
    traceparent?: string | null;
  },
): Promise<DocumentRow> {
  return db.transaction(async (trx) => {
    const doc = await findDocument(trx, ownerId, input.documentId, true);
    if (!doc) throw new NotFoundError("Document not found");
    const row = await updateMeta(trx, doc.id, { title: input.title, pageSetup: input.pageSetup });
    await appendDocumentUpdated(trx, {
      ...eventOf(row, input),
      payload: {
        kind: "metadata",
        ...(input.title !== undefined && { title: input.title }),
        ...(input.pageSetup !== undefined && { page_setup: input.pageSetup }),
      },
    });
    return row;
  });
}

/**
 * Moves the owner's document to `archived` (true) or back, with a `document_updated` event
 * (`payload.kind` "archived" / "unarchived") in the same transaction. `row` is undefined for an
 * unknown or foreign id; `changed` is false when it already was in that state.
 */
async function setArchiveState(
  db: Knex,
  ownerId: string,
  input: { documentId: string; sessionId: string; traceparent?: string | null },
  archived: boolean,
): Promise<{ row?: DocumentRow; changed: boolean }> {
  return db.transaction(async (trx) => {
    const doc = await findDocument(trx, ownerId, input.documentId, true);
    if (!doc) return { changed: false };
    if ((doc.archived_at !== null) === archived) return { row: doc, changed: false };
    const row = await setArchived(trx, doc.id, archived);
    const payload = { kind: archived ? "archived" : "unarchived" };
    await appendDocumentUpdated(trx, { ...eventOf(row, input), payload });
    return { row, changed: true };
  });
}

/**
 * Archives a document (endpoint 7; the gateway did the in-use check). Already archived: no
 * change. The `document_updated` event (`payload.kind` "archived") tells the sessions that held it.
 * NotFoundError for an unknown or foreign id.
 */
export async function archiveDocument(
  db: Knex,
  ownerId: string,
  input: { documentId: string; sessionId: string; traceparent?: string | null },
): Promise<{ row: DocumentRow; alreadyArchived: boolean }> {
  const { row, changed } = await setArchiveState(db, ownerId, input, true);
  if (!row) throw new NotFoundError("Document not found");
  return { row, alreadyArchived: !changed };
}

/**
 * Restores an archived document (endpoints 8 and 12). Idempotent: an active document is left as
 * it is, and an unknown or foreign id is a no-op (`row` undefined, nothing revealed).
 */
export async function unarchiveDocument(
  db: Knex,
  ownerId: string,
  input: { documentId: string; sessionId: string; traceparent?: string | null },
): Promise<{ row?: DocumentRow; unarchived: boolean }> {
  const { row, changed } = await setArchiveState(db, ownerId, input, false);
  return { row, unarchived: changed };
}

/**
 * Outbox events of the owner's `documentIds` with an id above `afterId` (endpoint 15), ascending.
 * Outbox ids commit in id order (appendOutbox), so a cursor never skips a late commit.
 */
export async function listDocumentEvents(
  db: Knex,
  ownerId: string,
  q: { documentIds: string[]; afterId: number; excludeSessionId: string; limit: number; types: string[] },
): Promise<{ events: OutboxRow[]; hasMore: boolean }> {
  const limit = Math.min(1000, Math.max(1, q.limit || 100));
  const rows = await eventsAfter(db, ownerId, {
    documentIds: q.documentIds,
    afterId: Math.max(0, q.afterId),
    excludeSessionId: q.excludeSessionId,
    types: q.types.length > 0 ? q.types : ["document_updated"],
    limit,
  });
  return { events: rows.slice(0, limit), hasMore: rows.length > limit };
}
