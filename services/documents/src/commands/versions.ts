// The version history of a document: a page of versions newest first, one version with its HTML,
// and the change records between two versions.
import { createHash } from "node:crypto";
import { type Knex, NotFoundError, SchemaError } from "@redline/service-kit";
import { findDocument } from "../db/store/documents.js";
import { chunksAt, deletingSeqs, liveChunksWithSeq } from "../db/store/revisions.js";
import { authorsAfter, countVersions, versionsPage, versionWithChanges } from "../db/store/versions.js";
import type { DocumentRow, VersionRow } from "../db/tables.js";
import { type ChangeFields, chunkChanges } from "./change-records.js";
import type { ChangeRecordView } from "./commit-plan.js";
import { SNAPSHOT } from "./read.js";

/** A version and the number of chunks it inserted, changed or deleted. */
export interface VersionView {
  row: VersionRow;
  chunksChanged: number;
}

/** Default and largest page of ListVersions. */
const DEFAULT_LIMIT = 50;
const MAX_LIMIT = 200;

/** The owner's document (archived ones too, like GetDocument); NotFoundError naming the document. */
async function ownedDocument(db: Knex.Transaction, ownerId: string, documentId: string): Promise<DocumentRow> {
  const doc = await findDocument(db, ownerId, documentId);
  if (!doc) throw new NotFoundError("Document not found");
  return doc;
}

/** A store row with its count as the command's view of a version. */
const view = ({ chunks_changed, ...row }: VersionRow & { chunks_changed: number }): VersionView => ({
  row,
  chunksChanged: chunks_changed,
});

/**
 * A page of the owner's document's versions, newest first, and the number of versions (`total`).
 * `limit` 0 means 50 and is clamped to 1..200; a negative offset reads as 0. NotFoundError for an
 * unknown or foreign document.
 */
export function listVersions(
  db: Knex,
  ownerId: string,
  q: { documentId: string; limit: number; offset: number },
): Promise<{ versions: VersionView[]; total: number }> {
  const limit = Math.min(MAX_LIMIT, Math.max(1, q.limit || DEFAULT_LIMIT));
  const offset = Math.max(0, q.offset);
  // One snapshot: the page and the total count the same versions.
  return db.transaction(async (trx) => {
    const doc = await ownedDocument(trx, ownerId, q.documentId);
    const [rows, total] = await Promise.all([versionsPage(trx, doc.id, { limit, offset }), countVersions(trx, doc.id)]);
    return { versions: rows.map(view), total };
  }, SNAPSHOT);
}

/**
 * One version of the owner's document; with `includeHtml` its HTML (the chunks live at that
 * version in order, joined with "\n"), else "". NotFoundError naming the document (unknown or
 * foreign) or the version (not one of this document's).
 */
export function getVersion(
  db: Knex,
  ownerId: string,
  q: { documentId: string; versionId: string; includeHtml: boolean },
): Promise<{ version: VersionView; html: string }> {
  return db.transaction(async (trx) => {
    const doc = await ownedDocument(trx, ownerId, q.documentId);
    const found = await versionWithChanges(trx, doc.id, q.versionId);
    if (!found) throw new NotFoundError("Version not found");
    const chunks = q.includeHtml ? await chunksAt(trx, doc.id, found.seq) : [];
    return { version: view(found), html: chunks.map((c) => c.html).join("\n") };
  }, SNAPSHOT);
}

/** A UUID-shaped id derived from its parts: the same diff names the same change ids. */
function derivedId(...parts: string[]): string {
  const hex = createHash("sha256").update(parts.join("\0")).digest("hex");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20, 32)}`;
}

/**
 * The change records from version `againstVersionId` of the owner's document to `versionId`
 * (edits and creates in `versionId`'s order, then deletes; see chunkChanges), read in one
 * snapshot. An empty `againstVersionId` means the predecessor; the first version has none and
 * is compared with an empty document (`against` undefined: every chunk a create). Explanations
 * are "" (a diff has no operation to quote). NotFoundError naming the document (unknown or
 * foreign) or a version (not one of this document's).
 */
export function diffVersions(
  db: Knex,
  ownerId: string,
  q: { documentId: string; versionId: string; againstVersionId: string },
): Promise<{ version: VersionView; against?: VersionView; changes: ChangeRecordView[] }> {
  return db.transaction(async (trx) => {
    const doc = await ownedDocument(trx, ownerId, q.documentId);
    const version = await versionWithChanges(trx, doc.id, q.versionId);
    if (!version) throw new NotFoundError("Version not found");
    const againstId = q.againstVersionId || version.parent_id;
    const against = againstId ? await versionWithChanges(trx, doc.id, againstId) : undefined;
    if (againstId && !against) throw new NotFoundError("Version to compare against (against) not found");
    const [before, after] = await Promise.all([
      against ? chunksAt(trx, doc.id, against.seq) : [],
      chunksAt(trx, doc.id, version.seq),
    ]);
    const changes = chunkChanges(doc.id, before, after, {
      changeId: (c: ChangeFields) => derivedId(against?.id ?? "", version.id, c.operation, c.chunkId),
      explanation: () => "",
    });
    return { version: view(version), ...(against && { against: view(against) }), changes };
  }, SNAPSHOT);
}

/** One chunk that differs between a version and head (see chunkChangesSince). */
export interface ChunkChangeView {
  chunkId: string;
  kind: "modified" | "inserted" | "deleted";
  /** At the since version; "" when inserted. */
  baseHtml: string;
  /** At head; "" when deleted. */
  html: string;
  /** Deleted chunks: the nearest earlier chunk (since version's order) still live at head; "" = none. */
  afterChunkId: string;
  /** The latest version that touched the chunk: its seq, author and commit time. */
  seq: number;
  author: string;
  date: Date;
}

/**
 * What changed in the owner's document from version `sinceSeq` (0 = the version it was loaded at
 * from its original file, else its first version) to head,
 * per chunk, each attributed to the latest version that touched it: head's order for modified
 * and inserted chunks, then deleted ones in the since version's order. Read in one snapshot.
 * NotFoundError for an unknown or foreign document; SchemaError (422, loc
 * body.options.since_version) for a seq outside 1..head.
 */
export function chunkChangesSince(
  db: Knex,
  ownerId: string,
  q: { documentId: string; sinceSeq: number },
): Promise<{ sinceSeq: number; headSeq: number; changes: ChunkChangeView[] }> {
  return db.transaction(async (trx) => {
    const doc = await ownedDocument(trx, ownerId, q.documentId);
    // Default: the version the document was loaded at from its original, else its first.
    const since = q.sinceSeq || doc.source_seq || 1;
    if (!Number.isInteger(since) || since < 1 || since > doc.head_seq)
      throw new SchemaError([
        {
          type: "value_error",
          loc: ["body", "options", "since_version"],
          msg: `since_version must be a version of this document, 1 to ${doc.head_seq}`,
        },
      ]);
    const [base, head, authors] = await Promise.all([
      chunksAt(trx, doc.id, since),
      liveChunksWithSeq(trx, doc.id),
      authorsAfter(trx, doc.id, since),
    ]);
    const baseById = new Map(base.map((c) => [c.chunk_id, c.html]));
    const headIds = new Set(head.map((c) => c.chunk_id));
    const attributed = (seq: number) => {
      const v = authors.get(seq);
      return { seq, author: v?.author ?? "Redline", date: v ? new Date(v.created_at) : new Date(doc.updated_at) };
    };
    const changes: ChunkChangeView[] = [];
    for (const c of head) {
      const before = baseById.get(c.chunk_id);
      if (before === c.html) continue;
      const kind = before === undefined ? "inserted" : "modified";
      changes.push({
        chunkId: c.chunk_id,
        kind,
        baseHtml: before ?? "",
        html: c.html,
        afterChunkId: "",
        ...attributed(c.valid_from),
      });
    }
    const gone = base.filter((c) => !headIds.has(c.chunk_id));
    const closedAt = await deletingSeqs(
      trx,
      doc.id,
      gone.map((c) => c.chunk_id),
    );
    let anchor = "";
    for (const c of base) {
      if (headIds.has(c.chunk_id)) {
        anchor = c.chunk_id;
        continue;
      }
      changes.push({
        chunkId: c.chunk_id,
        kind: "deleted",
        baseHtml: c.html,
        html: "",
        afterChunkId: anchor,
        ...attributed(closedAt.get(c.chunk_id) ?? doc.head_seq),
      });
    }
    return { sinceSeq: since, headSeq: doc.head_seq, changes };
  }, SNAPSHOT);
}
