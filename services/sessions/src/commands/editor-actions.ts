// Editor actions (font, colour, alignment changes) a session records; history shows them.
import type { Knex } from "@redline/service-kit";
import { insertEditorActions, lastEditorActions } from "../db/store/editor-actions.js";
import { touchSession } from "../db/store/sessions.js";
import type { EditorActionRow } from "../db/tables.js";
import { getSession } from "./sessions.js";

/** Editor actions returned by a history read. */
const MAX_EDITOR_ACTIONS = 500;

/** An editor action to record. */
export interface EditorActionInput {
  action: string;
  value: string;
  documentId: string;
  chunkIds: string[];
  details: Record<string, unknown> | null;
}

/** Records editor actions of a session in order. NotFoundError for a foreign session. */
export async function recordEditorActions(
  db: Knex,
  ownerId: string,
  sessionId: string,
  actions: EditorActionInput[],
): Promise<EditorActionRow[]> {
  await getSession(db, ownerId, sessionId);
  if (actions.length === 0) return [];
  return db.transaction(async (trx) => {
    const rows = await insertEditorActions(
      trx,
      actions.map((a) => ({
        owner_id: ownerId,
        session_id: sessionId,
        action: a.action,
        value: a.value,
        document_id: a.documentId,
        chunk_ids: a.chunkIds,
        details: a.details,
      })),
    );
    await touchSession(trx, ownerId, sessionId);
    return rows;
  });
}

/** A session's editor actions, oldest first (the last 500). NotFoundError for a foreign session. */
export async function listEditorActions(db: Knex, ownerId: string, sessionId: string): Promise<EditorActionRow[]> {
  await getSession(db, ownerId, sessionId);
  return lastEditorActions(db, ownerId, sessionId, MAX_EDITOR_ACTIONS);
}
