// The conversation side of revert and redo-revert (unshown-parts.md, Revert): which turns a
// revert touches, deactivating them with a record for redo, and reactivating them.
import { randomBytes } from "node:crypto";
import { ConflictError, type Knex, NotFoundError, SchemaError } from "@redline/service-kit";
import type { MessageRow, RosterRow, SessionRow } from "../tables.js";

const S = "sessions";
const T = { sessions: `${S}.sessions`, roster: `${S}.roster`, messages: `${S}.messages`, reverts: `${S}.reverts` };

/** A document a revert restored. */
export interface RestoredDoc {
  document_id: string;
  from_version_id: string;
  to_version_id: string;
}

/** A stored revert. */
export interface RevertRow {
  id: string;
  owner_id: string;
  session_id: string;
  turn_index: number;
  message_ids: string[];
  closed_slot_ids: string[];
  restored: RestoredDoc[];
  created_at: Date;
  undone_at: Date | null;
}

async function ownSession(db: Knex | Knex.Transaction, ownerId: string, sessionId: string): Promise<SessionRow> {
  const row = await db<SessionRow>(T.sessions).where({ id: sessionId, owner_id: ownerId }).first();
  if (!row) throw new NotFoundError("Session not found");
  return row;
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
  const messages = await db<MessageRow>(T.messages)
    .where({ owner_id: ownerId, session_id: sessionId, active: true })
    .orderBy([
      { column: "turn_index", order: "asc" },
      { column: "created_at", order: "asc" },
    ]);
  const target = messages.filter((m) => m.turn_index === turnIndex);
  if (target.length === 0) throw new NotFoundError(`Turn ${turnIndex} is not in the active history`);
  const earlier = messages.filter((m) => m.turn_index < turnIndex);
  const bound = earlier.length > 0 ? earlier[earlier.length - 1].created_at : null;
  const roster = await db<RosterRow>(T.roster).where({ owner_id: ownerId, session_id: sessionId });
  const openBefore = bound ? roster.some((r) => r.opened_at <= bound) : false;
  const checkpoint = target[0].checkpoint_id;
  if (!checkpoint && openBefore) {
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
  return db.transaction(async (trx) => {
    const session = await trx<SessionRow>(T.sessions)
      .where({ id: input.sessionId, owner_id: ownerId })
      .forUpdate()
      .first();
    if (!session) throw new NotFoundError("Session not found");
    const deactivated = await trx<MessageRow>(T.messages)
      .where({ owner_id: ownerId, session_id: session.id, active: true })
      .andWhere("turn_index", ">=", input.turnIndex)
      .update({ active: false })
      .returning(["id", "turn_index"]);
    if (deactivated.length === 0) throw new NotFoundError(`Turn ${input.turnIndex} is not in the active history`);
    if (input.closeSlotIds.length > 0) {
      await trx(T.roster)
        .where({ owner_id: ownerId, session_id: session.id })
        .whereIn("slot_id", input.closeSlotIds)
        .update({ closed_at: trx.fn.now(), focused: false });
    }
    for (const r of input.restored) {
      await trx(T.roster)
        .where({ owner_id: ownerId, session_id: session.id, document_id: r.document_id })
        .whereNull("closed_at")
        .update({ last_seen_version_id: r.to_version_id });
    }
    await refocus(trx, ownerId, session.id);
    const id = `rc_${randomBytes(12).toString("hex")}`;
    await trx(T.reverts).insert({
      id,
      owner_id: ownerId,
      session_id: session.id,
      turn_index: input.turnIndex,
      message_ids: JSON.stringify(deactivated.map((m) => m.id)),
      closed_slot_ids: JSON.stringify(input.closeSlotIds),
      restored: JSON.stringify(input.restored),
    });
    await trx(T.sessions).where({ owner_id: ownerId, id: session.id }).update({ updated_at: trx.fn.now() });
    return { redoId: id, archived: new Set(deactivated.map((m) => m.turn_index)).size };
  });
}

/** When no open slot is focused, focuses the first open one. */
async function refocus(trx: Knex.Transaction, ownerId: string, sessionId: string): Promise<void> {
  const open = await trx<RosterRow>(T.roster)
    .where({ owner_id: ownerId, session_id: sessionId })
    .whereNull("closed_at")
    .orderBy("position");
  if (open.length > 0 && !open.some((r) => r.focused)) {
    await trx(T.roster)
      .where({ owner_id: ownerId, session_id: sessionId, slot_id: open[0].slot_id })
      .update({ focused: true });
  }
}

/** A stored revert of the owner's session; NotFoundError when unknown. */
export async function getRevert(db: Knex, ownerId: string, sessionId: string, redoId: string): Promise<RevertRow> {
  await ownSession(db, ownerId, sessionId);
  const row = await db<RevertRow>(T.reverts).where({ id: redoId, owner_id: ownerId, session_id: sessionId }).first();
  if (!row) throw new NotFoundError("Unknown redo_checkpoint_id");
  return row;
}

/**
 * Reactivates the revert's messages and reopens its slots. ConflictError when it was undone
 * already or when turns were added after it (they would interleave with the restored ones).
 */
export async function undoRevert(db: Knex, ownerId: string, sessionId: string, redoId: string): Promise<number> {
  return db.transaction(async (trx) => {
    await trx<SessionRow>(T.sessions).where({ id: sessionId, owner_id: ownerId }).forUpdate().first();
    const row = await trx<RevertRow>(T.reverts)
      .where({ id: redoId, owner_id: ownerId, session_id: sessionId })
      .forUpdate()
      .first();
    if (!row) throw new NotFoundError("Unknown redo_checkpoint_id");
    if (row.undone_at) throw new ConflictError("This revert was already undone", { code: "revert_already_undone" });
    const [newer] = await trx(T.messages)
      .where({ owner_id: ownerId, session_id: sessionId, active: true })
      .andWhere("created_at", ">", row.created_at)
      .count<{ count: string }[]>("* as count");
    if (Number(newer?.count ?? 0) > 0) {
      throw new ConflictError("Turns were added after this revert; it can no longer be undone", {
        code: "revert_superseded",
      });
    }
    const reactivated = await trx<MessageRow>(T.messages)
      .where({ owner_id: ownerId, session_id: sessionId })
      .whereIn("id", row.message_ids)
      .update({ active: true })
      .returning(["turn_index"]);
    if (row.closed_slot_ids.length > 0) {
      await trx(T.roster)
        .where({ owner_id: ownerId, session_id: sessionId })
        .whereIn("slot_id", row.closed_slot_ids)
        .update({ closed_at: null });
    }
    await trx(T.reverts).where({ id: redoId }).update({ undone_at: trx.fn.now() });
    await trx(T.sessions).where({ owner_id: ownerId, id: sessionId }).update({ updated_at: trx.fn.now() });
    return new Set(reactivated.map((m) => m.turn_index)).size;
  });
}
