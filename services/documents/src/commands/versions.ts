// The version history of a document: a page of versions newest first, and one version with its HTML.
import { type Knex, NotFoundError } from "@redline/service-kit";
import { findDocument } from "../db/store/documents.js";
import { chunksAt } from "../db/store/revisions.js";
import { countVersions, versionsPage, versionWithChanges } from "../db/store/versions.js";
import type { DocumentRow, VersionRow } from "../db/tables.js";
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
