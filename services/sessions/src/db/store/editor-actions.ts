// SQL of editor actions (font, colour, alignment changes) recorded by a session.
import { type EditorActionRow, T } from "../tables.js";
import type { Db } from "./sessions.js";

/** Inserts actions in order; the stored rows with ids and times. */
export async function insertEditorActions(
  db: Db,
  rows: Omit<EditorActionRow, "id" | "created_at">[],
): Promise<EditorActionRow[]> {
  return db(T.actions)
    .insert(
      rows.map((r) => ({
        ...r,
        chunk_ids: JSON.stringify(r.chunk_ids),
        details: r.details ? JSON.stringify(r.details) : null,
      })),
    )
    .returning("*");
}

/** The session's last `limit` actions, oldest first. */
export async function lastEditorActions(
  db: Db,
  ownerId: string,
  sessionId: string,
  limit: number,
): Promise<EditorActionRow[]> {
  const rows = await db<EditorActionRow>(T.actions)
    .where({ owner_id: ownerId, session_id: sessionId })
    .orderBy("id", "desc")
    .limit(limit);
  return rows.reverse();
}
