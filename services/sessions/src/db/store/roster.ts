// SQL of the roster: the slots (tabs) of a session, open or closed, and who holds a document.
// A roster row names (owner_id, session_id): its composite foreign key implies the owner's session.
import type { Knex } from "@redline/service-kit";
import { type HolderRow, type RosterRow, T } from "../tables.js";
import type { Db } from "./sessions.js";

/** Every slot of the session, open and closed. */
export function rosterOf(db: Db, ownerId: string, sessionId: string) {
  return db<RosterRow>(T.roster).where({ owner_id: ownerId, session_id: sessionId });
}

/** One slot of the session, or undefined. */
export async function findSlot(db: Db, ownerId: string, sessionId: string, slotId: string) {
  return rosterOf(db, ownerId, sessionId).where({ slot_id: slotId }).first();
}

/** Focuses `slotId` alone in the session. */
export async function focusOnly(db: Db, ownerId: string, sessionId: string, slotId: string): Promise<void> {
  await rosterOf(db, ownerId, sessionId).whereNot({ slot_id: slotId }).update({ focused: false });
  await rosterOf(db, ownerId, sessionId).where({ slot_id: slotId }).update({ focused: true });
}

/** Updates one slot's columns. */
export async function updateSlot(
  db: Db,
  ownerId: string,
  sessionId: string,
  slotId: string,
  fields: Partial<RosterRow>,
): Promise<void> {
  await rosterOf(db, ownerId, sessionId).where({ slot_id: slotId }).update(fields);
}

/** Inserts a new slot. */
export async function insertSlot(db: Db, row: Omit<RosterRow, "opened_at" | "closed_at"> & Partial<RosterRow>) {
  await db(T.roster).insert(row);
}

/** Closes one slot for `reason` ("closed" by the user), unfocused. */
export async function closeSlot(db: Db, ownerId: string, sessionId: string, slotId: string, reason: string) {
  await rosterOf(db, ownerId, sessionId)
    .where({ slot_id: slotId })
    .update({ closed_at: db.fn.now(), closed_reason: reason, focused: false });
}

/** Closes several slots (a revert), unfocused; closed_reason is left as it was. */
export async function closeSlots(db: Db, ownerId: string, sessionId: string, slotIds: string[]): Promise<void> {
  if (slotIds.length === 0) return;
  await rosterOf(db, ownerId, sessionId).whereIn("slot_id", slotIds).update({ closed_at: db.fn.now(), focused: false });
}

/** Reopens several slots (redo of a revert). */
export async function reopenSlots(db: Db, ownerId: string, sessionId: string, slotIds: string[]): Promise<void> {
  if (slotIds.length === 0) return;
  await rosterOf(db, ownerId, sessionId).whereIn("slot_id", slotIds).update({ closed_at: null });
}

/** Sets the last-seen version of the open slot(s) holding `documentId`. */
export async function setSeenForDocument(
  db: Db,
  ownerId: string,
  sessionId: string,
  documentId: string,
  versionId: string,
): Promise<void> {
  await rosterOf(db, ownerId, sessionId)
    .where({ document_id: documentId })
    .whereNull("closed_at")
    .update({ last_seen_version_id: versionId });
}

/** The session's open slots in tab order. */
export async function openSlotsInOrder(db: Db, ownerId: string, sessionId: string): Promise<RosterRow[]> {
  return rosterOf(db, ownerId, sessionId).whereNull("closed_at").orderBy("position", "asc");
}

/** Records the version a slot saw (and its title when given); the updated row or undefined. */
export async function markSlotSeen(
  db: Db,
  ownerId: string,
  input: { sessionId: string; slotId: string; versionId: string; title: string },
): Promise<RosterRow | undefined> {
  const updated = await rosterOf(db, ownerId, input.sessionId)
    .where({ slot_id: input.slotId })
    .update({ last_seen_version_id: input.versionId, ...(input.title ? { title: input.title } : {}) })
    .returning("*");
  return updated[0] as RosterRow | undefined;
}

/** The attach write, with the slot already chosen by the caller. */
export interface AttachWrite {
  sessionId: string;
  slotId: string;
  position: number;
  /** Focused when the slot is new (an existing slot keeps its focus unless `focus`). */
  focusedIfNew: boolean;
  focus: boolean;
  durableDocumentId: string;
  title: string;
  versionId: string;
}

/** One statement: unfocuses the others (with `focus`), upserts the slot, touches the session. */
export async function upsertAttachedSlot(trx: Knex.Transaction, ownerId: string, w: AttachWrite): Promise<RosterRow> {
  const res = await trx.raw<{ rows: RosterRow[] }>(
    `with unfocus as (
       update ${T.roster} set focused = false
        where owner_id = ? and session_id = ? and slot_id <> ? and focused and ?
     ),
     up as (
       insert into ${T.roster}
              (owner_id, session_id, slot_id, position, focused, document_id, title, last_seen_version_id,
               closed_at, closed_reason)
       values (?, ?, ?, ?, ?, ?, ?, ?, null, null)
       on conflict (owner_id, session_id, slot_id) do update
          set document_id = excluded.document_id, title = excluded.title,
              last_seen_version_id = excluded.last_seen_version_id, closed_at = null, closed_reason = null,
              focused = ${T.roster}.focused or ?
       returning *
     ),
     touch as (update ${T.sessions} set updated_at = now() where owner_id = ? and id = ?)
     select * from up`,
    [
      ...[ownerId, w.sessionId, w.slotId, w.focus],
      ...[ownerId, w.sessionId, w.slotId, w.position, w.focusedIfNew, w.durableDocumentId, w.title, w.versionId],
      w.focus,
      ...[ownerId, w.sessionId],
    ],
  );
  return res.rows[0];
}

/** Open slots of `documentIds` in the owner's sessions, most recently active first, but `excludeSessionId`. */
export async function documentHolders(
  db: Db,
  ownerId: string,
  documentIds: string[],
  excludeSessionId: string,
): Promise<HolderRow[]> {
  const q = db(`${T.roster} as r`)
    .join(`${T.sessions} as s`, (j) => j.on("s.owner_id", "=", "r.owner_id").andOn("s.id", "=", "r.session_id"))
    .select<HolderRow[]>("r.document_id", "r.session_id", "s.title as session_title", "r.slot_id", "s.updated_at")
    .where("s.owner_id", ownerId)
    .whereIn("r.document_id", documentIds)
    .whereNull("r.closed_at");
  if (excludeSessionId) q.whereNot("r.session_id", excludeSessionId);
  return q.orderBy([
    { column: "s.updated_at", order: "desc" },
    { column: "r.session_id", order: "asc" },
  ]);
}

/** Closes every open slot of `documentId` in the owner's sessions as "archived"; the closed rows. */
export async function archiveSlotsOf(db: Db, ownerId: string, documentId: string): Promise<RosterRow[]> {
  return db<RosterRow>(T.roster)
    .where({ owner_id: ownerId, document_id: documentId })
    .whereNull("closed_at")
    .update({ closed_at: db.fn.now(), closed_reason: "archived", focused: false })
    .returning("*");
}

/**
 * Slots whose documents the session watches: open ones and those an archive closed, left-joined
 * to the owner's session (no rows: no such session; one row of nulls: nothing watched).
 */
export async function watchedSlots(
  db: Db,
  ownerId: string,
  sessionId: string,
): Promise<{ document_id: string | null; slot_id: string | null; closed_at: Date | null }[]> {
  return db(`${T.sessions} as s`)
    .leftJoin(`${T.roster} as r`, function () {
      this.on("r.owner_id", "=", "s.owner_id")
        .andOn("r.session_id", "=", "s.id")
        .andOnNotNull("r.document_id")
        .andOn((w) => w.onNull("r.closed_at").orOnVal("r.closed_reason", "=", "archived"));
    })
    .select<{ document_id: string | null; slot_id: string | null; closed_at: Date | null }[]>(
      "r.document_id",
      "r.slot_id",
      "r.closed_at",
    )
    .where({ "s.id": sessionId, "s.owner_id": ownerId });
}
