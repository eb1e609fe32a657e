// Loading HTML into documents: create a document, or replace one's content as a new version.
import { createHash, randomUUID } from "node:crypto";
import { type ChunkRecord, chunkHtml, isValidChunkId, sections, textOf } from "@redline/html-chunks";
import { InputError, type Knex, NotFoundError } from "@redline/service-kit";
import { generateKeyBetween, generateNKeysBetween } from "fractional-indexing";
import { type DocumentSourceRef, findDocument, insertNewDocument, setSource } from "../db/store/documents.js";
import { chunksAt, closeRevisions, insertRevisions } from "../db/store/revisions.js";
import { findVersionByKey } from "../db/store/versions.js";
import { type ChunkRevisionRow, type DocumentRow, UNATTRIBUTED, type VersionAuthor } from "../db/tables.js";
import { isHeadingHtml } from "./headings.js";
import { type DocumentView, getDocument } from "./read.js";
import { recordVersion } from "./record-version.js";

/** Title from the first heading, else the first words of the text, else "Untitled document". */
export function deriveTitle(chunks: ChunkRecord[]): string {
  const heading = sections(chunks).find((s) => s.headingChunkId !== null && s.title.trim());
  if (heading) return heading.title.trim().slice(0, 200);
  const first = chunks.map((c) => textOf(c.html).trim()).find(Boolean);
  return first ? first.split(/\s+/).slice(0, 8).join(" ").slice(0, 200) : "Untitled document";
}

/**
 * Sanitizes and chunks HTML being loaded. Ids are kept when well-formed and unique (a loaded
 * document is a fresh id space), else minted. Part marks make a block a header, footer, note
 * list or comment, which exporters place out of the flow: only the docx/rtf/pdf converters and
 * our own stored chunks may set them (`keepParts`); an upload of HTML/Markdown/text, chat
 * `document_html` or a first save is caller-written, so its marks are removed.
 */
export function loadChunks(html: string, keepParts = false): ChunkRecord[] {
  return chunkHtml(html, { parts: keepParts ? "keep" : "drop" }).chunks;
}

/** An InputError naming a loaded chunk (400 `invalid_chunk`). */
function invalidChunk(index: number, message: string): InputError {
  return new InputError(`chunk ${index}: ${message}`, { code: "invalid_chunk", chunk_index: index });
}

/**
 * Checks chunks made elsewhere (a chat turn's load, chunked by the agent) as commit-plan checks
 * an operation's chunk: each id well-formed and unique, each chunk exactly one block, its HTML
 * stored as the sanitizer makes it (with only the part marks `keepParts` allows), so the caller
 * is not trusted to have sanitized. Returns the chunks as stored: the agent's own chunkHtml
 * output comes back unchanged (a fixed point). InputError (400 `invalid_chunk`) names the first
 * chunk that is not one block with its id. All chunks are sanitized and split in one pass:
 * validateChunkHtml on each (the same rules) costs about 2.5 times as much on 2,000 chunks.
 */
export function validateLoadChunks(chunks: ChunkRecord[], keepParts = false): ChunkRecord[] {
  const seen = new Set<string>();
  for (const [i, c] of chunks.entries()) {
    if (!isValidChunkId(c.chunkId)) throw invalidChunk(i, `invalid chunk id "${c.chunkId.slice(0, 80)}"`);
    if (seen.has(c.chunkId)) throw invalidChunk(i, `duplicate chunk id ${c.chunkId}`);
    seen.add(c.chunkId);
  }
  // A chunk that is not one block (several, none, unbalanced tags) splits or merges with its
  // neighbours here, so its id is not found at its place.
  const stored = loadChunks(chunks.map((c) => c.html).join("\n"), keepParts);
  const stray = chunks.findIndex((c, i) => stored[i]?.chunkId !== c.chunkId);
  if (stray >= 0) throw invalidChunk(stray, "not exactly one block carrying its data-chunk-id");
  if (stored.length > chunks.length) throw invalidChunk(chunks.length - 1, "not exactly one block");
  return stored;
}

const SOURCE_FORMATS = new Set(["docx", "markdown", "txt"]);

/** A source reference worth recording: an id and a known format (else none). */
function validSource(source: DocumentSourceRef | null | undefined): DocumentSourceRef | null {
  if (!source?.sourceId || !SOURCE_FORMATS.has(source.format) || source.sourceId.length > 64) return null;
  return { sourceId: source.sourceId, format: source.format };
}

/** UUID namespace of idempotent document ids (fixed forever: changing it breaks replays). */
const DOCUMENT_ID_NAMESPACE = Buffer.from("4f0c6a1e-8b2d-4c7a-9e35-d1b07a6c2f48".replaceAll("-", ""), "hex");

/**
 * The id of the document created for (owner, idempotency key): a name-based UUID v5 (RFC 9562)
 * over `ownerId NUL key`. The owner is part of the name, so two owners using the same key get
 * different documents and a key never reaches another tenant's document.
 */
export function idempotentDocumentId(ownerId: string, key: string): string {
  const hash = createHash("sha1").update(DOCUMENT_ID_NAMESPACE).update(`${ownerId}\0${key}`, "utf8").digest();
  hash[6] = (hash[6] & 0x0f) | 0x50; // version 5
  hash[8] = (hash[8] & 0x3f) | 0x80; // RFC variant
  const hex = hash.subarray(0, 16).toString("hex");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/**
 * Creates a document from raw HTML (sanitized and chunked) as version 1, with a
 * `document_created` outbox event, in one statement (insertNewDocument). Out-of-flow part
 * marks (`data-part`) are removed unless `keepParts` (see loadChunks).
 *
 * With an `idempotencyKey`, the id is derived from (owner, key): a retry with the same key (the
 * agent's job rerun after its worker died right after storing) writes nothing and returns that
 * document as it is now (head version and chunks), whatever HTML the retry carried. Without one,
 * every call creates a new document with a random id.
 */
export async function createDocument(
  db: Knex,
  ownerId: string,
  input: NewDocumentInput & { html: string; keepParts?: boolean },
): Promise<DocumentView & { replayed: boolean }> {
  const chunks = loadChunks(input.html, input.keepParts);
  const created = await insertLoaded(db, ownerId, input, chunks);
  if (created.row) return { row: created.row, chunks, versionId: created.row.head_version_id, replayed: false };
  // A replay: read it in a fresh snapshot (a concurrent first call may have committed after the
  // insert's snapshot was taken). The id embeds the owner, so it is never another owner's.
  return { ...(await getDocument(db, ownerId, { documentId: created.id, includeChunks: true })), replayed: true };
}

/** What a new document records besides its chunks (createDocument, commitTurn). */
export interface NewDocumentInput {
  title?: string;
  pageSetup?: Record<string, unknown> | null;
  sessionId: string;
  idempotencyKey?: string;
  /** Who version 1 is attributed to (default UNATTRIBUTED). */
  author?: VersionAuthor;
  /** The original the HTML was converted from (ingest kept it); its chunk ids are kept as given. */
  source?: DocumentSourceRef | null;
  /** The writing RPC's span (traceparentOf(call.trace)), for the event's publish. */
  traceparent?: string | null;
}

/**
 * Inserts checked chunks (loadChunks, validateLoadChunks) as a new document at version 1 with
 * its `document_created` event, in one statement, on `db` or in the caller's transaction.
 * Returns the row, or only the id when a document with the idempotency key's id exists (a
 * replay: nothing written). Error for a random id that collides.
 */
export async function insertLoaded(
  db: Knex | Knex.Transaction,
  ownerId: string,
  input: NewDocumentInput,
  chunks: ChunkRecord[],
): Promise<{ id: string; row?: DocumentRow }> {
  const id = input.idempotencyKey ? idempotentDocumentId(ownerId, input.idempotencyKey) : randomUUID();
  const versionId = randomUUID();
  const positions = generateNKeysBetween(null, null, chunks.length);
  const title = input.title?.trim() || deriveTitle(chunks);
  const row = await insertNewDocument(db, {
    id,
    ownerId,
    title,
    pageSetup: input.pageSetup ?? null,
    versionId,
    sessionId: input.sessionId,
    author: input.author ?? UNATTRIBUTED,
    sectionCount: chunks.filter((c) => isHeadingHtml(c.html)).length,
    chunks: chunks.map((c, i) => ({ chunkId: c.chunkId, html: c.html, position: positions[i] })),
    eventPayload: { title, chunk_count: chunks.length },
    source: validSource(input.source),
    traceparent: input.traceparent,
  });
  // Nothing was written when the id exists. A random id colliding is not a replay.
  if (!row && !input.idempotencyKey) throw new Error("document id collision");
  return { id, row };
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
 * The live rows a replace closes and the rows it inserts, as version `head_seq + 1` (both empty
 * when `chunks` are head's chunks already). Used by content replaces and version restores.
 */
export function replaceRevisions(
  doc: DocumentRow,
  live: { chunk_id: string; html: string; position: string }[],
  chunks: ChunkRecord[],
): { toClose: string[]; rows: ChunkRevisionRow[] } {
  const { keep, positions } = planReplace(live, chunks);
  const nextIds = new Set(chunks.map((c) => c.chunkId));
  const toClose = live.filter((r) => !keep.has(r.chunk_id) || !nextIds.has(r.chunk_id)).map((r) => r.chunk_id);
  const rows = chunks
    .filter((c) => !keep.has(c.chunkId))
    .map((c) => ({
      document_id: doc.id,
      chunk_id: c.chunkId,
      position: positions.get(c.chunkId) ?? generateKeyBetween(null, null),
      html: c.html,
      valid_from: doc.head_seq + 1,
      valid_to: null,
    }));
  return { toClose, rows };
}

/** What a replace records besides its chunks (replaceDocument, commitTurn). */
export interface ReplaceInput {
  documentId: string;
  sessionId: string;
  title?: string;
  pageSetup?: Record<string, unknown> | null;
  /** Who the new version is attributed to (default UNATTRIBUTED). */
  author?: VersionAuthor;
  /** The original the new content was converted from; none clears the document's. */
  source?: DocumentSourceRef | null;
  /** A second replace with the same key on this document writes nothing (`replayed`). */
  idempotencyKey?: string;
  /** The writing RPC's span (traceparentOf(call.trace)), for the event's publish. */
  traceparent?: string | null;
}

/**
 * Replaces a document's content verbatim as a new version. Chunks whose id and HTML are
 * unchanged keep their stored revision; the rest are revised, inserted or closed. Part marks
 * are removed unless `keepParts` (see loadChunks).
 * Throws NotFoundError for an unknown or foreign id.
 */
export async function replaceDocument(
  db: Knex,
  ownerId: string,
  input: ReplaceInput & { html: string; keepParts?: boolean },
): Promise<DocumentView> {
  const chunks = loadChunks(input.html, input.keepParts);
  return db.transaction((trx) => replaceInTransaction(trx, ownerId, input, chunks));
}

/** A replace's result: the document at the version it wrote, and the head before it. */
export interface ReplaceResult extends DocumentView {
  /** The head before the replace (its parent). */
  previousVersionId: string;
  /** True when the idempotency key had written a version already: nothing was written. */
  replayed: boolean;
}

/**
 * replaceDocument of checked chunks (loadChunks, validateLoadChunks) inside the caller's
 * transaction, the document row locked. A replay answers the version the key wrote (its parent
 * as the previous head) and the document as it is now, with no chunks. NotFoundError.
 */
export async function replaceInTransaction(
  trx: Knex.Transaction,
  ownerId: string,
  input: ReplaceInput,
  chunks: ChunkRecord[],
): Promise<ReplaceResult> {
  const doc = await findDocument(trx, ownerId, input.documentId, true);
  if (!doc) throw new NotFoundError("Document not found");
  const earlier = input.idempotencyKey ? await findVersionByKey(trx, doc.id, input.idempotencyKey) : undefined;
  if (earlier) {
    const previousVersionId = earlier.parent_id ?? "";
    return { row: doc, chunks: [], versionId: earlier.id, previousVersionId, replayed: true };
  }
  const { toClose, rows } = replaceRevisions(doc, await chunksAt(trx, doc.id), chunks);
  await closeRevisions(trx, doc.id, toClose, doc.head_seq + 1);
  await insertRevisions(trx, rows);
  const row = await recordVersion(trx, doc, {
    ownerId,
    sessionId: input.sessionId,
    kind: "replace",
    summary: "content replaced",
    idempotencyKey: input.idempotencyKey,
    author: input.author ?? UNATTRIBUTED,
    traceparent: input.traceparent,
    head: {
      chunkCount: chunks.length,
      sectionCount: chunks.filter((c) => isHeadingHtml(c.html)).length,
      title: input.title?.trim() || undefined,
      pageSetup: input.pageSetup,
    },
    payload: { kind: "replace", changed_chunks: new Set([...toClose, ...rows.map((r) => r.chunk_id)]).size },
  });
  const source = validSource(input.source);
  // The replaced content's original (or none) from this version on; an untouched row stays.
  const after = source || row.source_id ? await setSource(trx, row.id, source, row.head_seq) : row;
  const previousVersionId = doc.head_version_id;
  return { row: after, chunks, versionId: after.head_version_id, previousVersionId, replayed: false };
}
