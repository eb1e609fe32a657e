// The conversation side of revert and redo-revert (unshown-parts.md, Revert): which turns a
// revert touches, deactivating them with a record for redo, and reactivating them.
import { randomBytes } from "node:crypto";
import { ConflictError, type Knex, NotFoundError, SchemaError } from "@redline/service-kit";
import {
  activeMessagesSince,
  deactivateFrom,
  findRevert,
  insertRevert,
  lockRevert,
  markRevertUndone,
  reactivate,
} from "../db/store/reverts.js";
import { closeSlots, reopenSlots, rosterOf, setSeenForDocument } from "../db/store/roster.js";
import { activeMessages, type Db, findSession, lockSessionRow, touchSession } from "../db/store/sessions.js";
import type { RestoredDoc, RevertRow, RosterRow } from "../db/tables.js";
import { focusFirstIfNone } from "./roster.js";

export type { RestoredDoc, RevertRow } from "../db/tables.js";

async function ownSession(db: Db, ownerId: string, sessionId: string): Promise<void> {
  if (!(await findSession(db, ownerId, sessionId))) throw new NotFoundError("Session not found");
}

/**
 * What reverting to `turnIndex` touches: the active turns from it on (with checkpoints), the
 * user message to give back, and slots opened after the previous turn ended. NotFoundError when
 * the turn is not in the active history; SchemaError (422) when it has no restore point (no
 * checkpoint recorded although a document was open before it: a turn from before the feature).
 */
export async function planRevert(
  db: Knex,
  ownerId: string,
  sessionId: string,
  turnIndex: number,
): Promise<{ turns: { turnIndex: number; checkpointId: string }[]; composeText: string; openedSlots: RosterRow[] }> {
  await ownSession(db, ownerId, sessionId);
  const messages = await activeMessages(db, ownerId, sessionId);
  const target = messages.filter((m) => m.turn_index === turnIndex);
  if (target.length === 0) throw new NotFoundError(`Turn ${turnIndex} is not in the active history`);
  const earlier = messages.filter((m) => m.turn_index < turnIndex);
  const bound = earlier.length > 0 ? earlier[earlier.length - 1].created_at : null;
  const roster = await rosterOf(db, ownerId, sessionId);
  const openBefore = bound ? roster.some((r) => r.opened_at <= bound) : false;
  if (!target[0].checkpoint_id && openBefore) {
    throw new SchemaError([
      {
        type: "no_restore_point",
        loc: ["body", "turn_index"],
        msg: `Turn ${turnIndex} has no restore point (it predates revert); start a new session to go further back`,
      },
    ]);
  }
  const turns = new Map<number, string>();
  for (const m of messages)
    if (m.turn_index >= turnIndex && !turns.has(m.turn_index)) turns.set(m.turn_index, m.checkpoint_id);
  return {
    turns: [...turns].map(([t, c]) => ({ turnIndex: t, checkpointId: c })),
    composeText: target.find((m) => m.sender === "user")?.content ?? "",
    openedSlots: roster.filter((r) => r.closed_at === null && (!bound || r.opened_at > bound)),
  };
}

/**
 * Deactivates the active messages from `turnIndex` on, closes `closeSlotIds` (focus moves to
 * the first open slot left), sets the restored documents' last-seen versions and stores the
 * revert. Returns the redo id and the number of turns archived.
 */
export async function applyRevert(
  db: Knex,
  ownerId: string,
  input: { sessionId: string; turnIndex: number; closeSlotIds: string[]; restored: RestoredDoc[] },
): Promise<{ redoId: string; archived: number }> {
  const sid = input.sessionId;
  return db.transaction(async (trx) => {
    if (!(await lockSessionRow(trx, ownerId, sid))) throw new NotFoundError("Session not found");
    const deactivated = await deactivateFrom(trx, ownerId, sid, input.turnIndex);
    if (deactivated.length === 0) throw new NotFoundError(`Turn ${input.turnIndex} is not in the active history`);
    await closeSlots(trx, ownerId, sid, input.closeSlotIds);
    for (const r of input.restored) await setSeenForDocument(trx, ownerId, sid, r.document_id, r.to_version_id);
    await focusFirstIfNone(trx, ownerId, sid);
    const id = `rc_${randomBytes(12).toString("hex")}`;
    await insertRevert(trx, {
      id,
      owner_id: ownerId,
      session_id: sid,
      turn_index: input.turnIndex,
      message_ids: deactivated.map((m) => m.id),
      closed_slot_ids: input.closeSlotIds,
      restored: input.restored,
    });
    await touchSession(trx, ownerId, sid);
    return { redoId: id, archived: new Set(deactivated.map((m) => m.turn_index)).size };
  });
}

/** A stored revert of the owner's session; NotFoundError when unknown. */
export async function getRevert(db: Knex, ownerId: string, sessionId: string, redoId: string): Promise<RevertRow> {
  await ownSession(db, ownerId, sessionId);
  const row = await findRevert(db, ownerId, sessionId, redoId);
  if (!row) throw new NotFoundError("Unknown redo_checkpoint_id");
  return row;
}

/**
 * Reactivates the revert's messages and reopens its slots; the number of turns restored.
 * ConflictError when it was undone already or when turns were added after it (they would
 * interleave with the restored ones).
 */
export async function undoRevert(db: Knex, ownerId: string, sessionId: string, redoId: string): Promise<number> {
  return db.transaction(async (trx) => {
    await lockSessionRow(trx, ownerId, sessionId);
    const row = await lockRevert(trx, ownerId, sessionId, redoId);
    if (!row) throw new NotFoundError("Unknown redo_checkpoint_id");
    if (row.undone_at) throw new ConflictError("This revert was already undone", { code: "revert_already_undone" });
    if ((await activeMessagesSince(trx, ownerId, sessionId, row.created_at)) > 0) {
      throw new ConflictError("Turns were added after this revert; it can no longer be undone", {
        code: "revert_superseded",
      });
    }
    const turns = await reactivate(trx, ownerId, sessionId, row.message_ids);
    await reopenSlots(trx, ownerId, sessionId, row.closed_slot_ids);
    await markRevertUndone(trx, redoId);
    await touchSession(trx, ownerId, sessionId);
    return new Set(turns).size;
  });
}
