// SQL of documents.versions: one row per commit.
import { isUuid } from "@redline/service-kit";
import { type Db, TABLES as T, type VersionRow } from "../tables.js";

/** Inserts a version row. */
export async function insertVersion(db: Db, row: Omit<VersionRow, "created_at">): Promise<void> {
  await db(T.versions).insert(row);
}

/** A version of the document by id, or undefined. */
export function findVersion(db: Db, documentId: string, versionId: string): Promise<VersionRow | undefined> {
  if (!isUuid(versionId)) return Promise.resolve(undefined);
  return db<VersionRow>(T.versions).where({ document_id: documentId, id: versionId }).first();
}

/** The version an earlier commit with this idempotency key wrote on the document, or undefined. */
export function findVersionByKey(db: Db, documentId: string, idempotencyKey: string): Promise<VersionRow | undefined> {
  return db<VersionRow>(T.versions).where({ document_id: documentId, idempotency_key: idempotencyKey }).first();
}

/** A version row with the number of chunks it inserted, changed or deleted. */
export type VersionWithChanges = VersionRow & { chunks_changed: number };

/**
 * Versions picked by `pick` (a statement over versions selecting `*`, with its bindings), newest
 * first, each with its changed-chunk count. One statement whatever the page size: a chunk
 * changed at version s has a revision opened at s (insert, edit) or closed at s (delete), so
 * the distinct (seq, chunk) pairs among rows opened or closed within the page's seq range are
 * counted once, scanning the document's revisions once rather than once per version.
 */
async function withChanges(
  db: Db,
  documentId: string,
  pick: string,
  bindings: unknown[],
): Promise<VersionWithChanges[]> {
  const { rows } = await db.raw<{ rows: VersionWithChanges[] }>(
    `with page as (${pick}),
     bounds as (select min(seq) as lo, max(seq) as hi from page),
     touched as (
       select r.valid_from as seq, r.chunk_id from ${T.chunks} r, bounds b
       where r.document_id = ? and r.valid_from between b.lo and b.hi
       union
       select r.valid_to as seq, r.chunk_id from ${T.chunks} r, bounds b
       where r.document_id = ? and r.valid_to between b.lo and b.hi
     ),
     counts as (select seq, count(*)::int as n from touched group by seq)
     select page.*, coalesce(counts.n, 0) as chunks_changed
     from page left join counts on counts.seq = page.seq
     order by page.seq desc`,
    [...bindings, documentId, documentId],
  );
  return rows;
}

/** A page of the document's versions, newest first, with their changed-chunk counts. */
export function versionsPage(
  db: Db,
  documentId: string,
  page: { limit: number; offset: number },
): Promise<VersionWithChanges[]> {
  return withChanges(
    db,
    documentId,
    `select * from ${T.versions} where document_id = ? order by seq desc limit ? offset ?`,
    [documentId, page.limit, page.offset],
  );
}

/** One version of the document with its changed-chunk count, or undefined. */
export async function versionWithChanges(
  db: Db,
  documentId: string,
  versionId: string,
): Promise<VersionWithChanges | undefined> {
  if (!isUuid(versionId)) return undefined;
  const pick = `select * from ${T.versions} where document_id = ? and id = ?`;
  return (await withChanges(db, documentId, pick, [documentId, versionId]))[0];
}

/** Number of versions of the document. */
export async function countVersions(db: Db, documentId: string): Promise<number> {
  const [row] = await db(T.versions).where({ document_id: documentId }).count<{ count: string }[]>("* as count");
  return Number(row?.count ?? 0);
}

/** Author and commit time of the document's versions after `seq`, by seq. */
export async function authorsAfter(
  db: Db,
  documentId: string,
  seq: number,
): Promise<Map<number, Pick<VersionRow, "author" | "created_at">>> {
  const rows = await db<VersionRow>(T.versions)
    .select("seq", "author", "created_at")
    .where({ document_id: documentId })
    .andWhere("seq", ">", seq);
  return new Map(rows.map((r) => [r.seq, { author: r.author, created_at: r.created_at }]));
}
