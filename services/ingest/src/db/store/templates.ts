// SQL of ingest.templates (soft-deleted rows are invisible to every read).
import type { Knex } from "@redline/service-kit";
import type { TemplateRow } from "../tables.js";

/** Stores a template and returns its row. */
export async function insertTemplate(
  db: Knex,
  row: Omit<TemplateRow, "created_at" | "deleted_at">,
): Promise<TemplateRow> {
  const [stored] = await db<TemplateRow>("templates").insert(row).returning("*");
  return stored;
}

const live = (db: Knex, ownerId: string) =>
  db<TemplateRow>("templates").where({ owner_id: ownerId }).whereNull("deleted_at");

/** The owner's live templates, newest first. */
export function listTemplates(db: Knex, ownerId: string): Promise<TemplateRow[]> {
  return live(db, ownerId).orderBy([
    { column: "created_at", order: "desc" },
    { column: "id", order: "desc" },
  ]);
}

/** Soft-deletes the owner's live template; undefined when there is none with that id. */
export async function softDeleteTemplate(db: Knex, ownerId: string, id: string): Promise<TemplateRow | undefined> {
  const [row] = await live(db, ownerId).where({ id }).update({ deleted_at: new Date() }).returning("*");
  return row;
}

/**
 * The owner's live template whose id is `ref`, else (newest first) whose name or filename is
 * `ref` case-insensitively, else whose name contains it. LIKE wildcards in `ref` match literally.
 */
export async function findTemplate(db: Knex, ownerId: string, ref: string): Promise<TemplateRow | undefined> {
  const escaped = ref.replace(/[\\%_]/g, "\\$&");
  const newest = (column: string, pattern: string) =>
    live(db, ownerId).whereILike(column, pattern).orderBy("created_at", "desc").first();
  return (
    (await live(db, ownerId).where({ id: ref }).first()) ??
    (await newest("name", escaped)) ??
    (await newest("filename", escaped)) ??
    (await newest("name", `%${escaped}%`))
  );
}
