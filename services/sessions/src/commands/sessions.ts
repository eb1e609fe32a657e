// Sessions, their roster of open documents, and their turns.
import { randomBytes, randomUUID } from "node:crypto";
import { ForbiddenError, type Knex, NotFoundError } from "@redline/service-kit";
import { SCHEMA } from "../migrations.js";
import type { MessageRow, RosterRow, SessionRow } from "../tables.js";

type Db = Knex | Knex.Transaction;
const T = { sessions: `${SCHEMA}.sessions`, roster: `${SCHEMA}.roster`, messages: `${SCHEMA}.messages` };
const TITLE_CHARS = 80;

/** A session with its open roster (focused first) and active message count. */
export interface SessionView {
  row: SessionRow;
  roster: RosterRow[];
  messageCount: number;
}

async function openRoster(db: Db, sessionId: string): Promise<RosterRow[]> {
  return db<RosterRow>(T.roster)
    .where({ session_id: sessionId })
    .whereNull("closed_at")
    .orderBy([
      { column: "focused", order: "desc" },
      { column: "position", order: "asc" },
    ]);
}

async function messageCount(db: Db, sessionId: string): Promise<number> {
  const [row] = await db(T.messages)
    .where({ session_id: sessionId, active: true })
    .count<{ count: string }[]>("* as count");
  return Number(row?.count ?? 0);
}

async function view(db: Db, row: SessionRow): Promise<SessionView> {
  const [roster, count] = await Promise.all([openRoster(db, row.id), messageCount(db, row.id)]);
  return { row, roster, messageCount: count };
}

/** The owner's session or NotFoundError (unknown and foreign ids read alike). */
export async function getSession(db: Db, ownerId: string, sessionId: string): Promise<SessionView> {
  const row = await db<SessionRow>(T.sessions).where({ id: sessionId, owner_id: ownerId }).first();
  if (!row) throw new NotFoundError("Session not found");
  return view(db, row);
}

/**
 * Gets or creates the session `sessionId` (minted when empty). ForbiddenError (403) when the
 * id is taken by another owner: session ids are global, and a caller must not adopt another's.
 */
export async function ensureSession(
  db: Knex,
  ownerId: string,
  sessionId: string,
): Promise<{ view: SessionView; created: boolean }> {
  const id = sessionId || `sess_${randomBytes(12).toString("hex")}`;
  const inserted = await db(T.sessions).insert({ id, owner_id: ownerId }).onConflict("id").ignore().returning("id");
  const row = await db<SessionRow>(T.sessions).where({ id }).first();
  if (!row || row.owner_id !== ownerId) throw new ForbiddenError("session_id is in use by another account");
  return { view: await view(db, row), created: inserted.length > 0 };
}

/** The owner's sessions, most recent activity first, at most `limit` (1..200). */
export async function listSessions(db: Knex, ownerId: string, limit: number): Promise<SessionView[]> {
  const rows = await db<SessionRow>(T.sessions)
    .where({ owner_id: ownerId })
    .orderBy([
      { column: "updated_at", order: "desc" },
      { column: "id", order: "asc" },
    ])
    .limit(Math.min(200, Math.max(1, limit || 50)));
  if (rows.length === 0) return [];
  const ids = rows.map((r) => r.id);
  // Two grouped queries instead of two per session.
  const [counts, roster] = await Promise.all([
    db(T.messages)
      .select("session_id")
      .count<{ session_id: string; count: string }[]>("* as count")
      .whereIn("session_id", ids)
      .andWhere({ active: true })
      .groupBy("session_id"),
    db<RosterRow>(T.roster)
      .whereIn("session_id", ids)
      .whereNull("closed_at")
      .orderBy([
        { column: "focused", order: "desc" },
        { column: "position", order: "asc" },
      ]),
  ]);
  const countBy = new Map(counts.map((c) => [c.session_id, Number(c.count)]));
  return rows.map((row) => ({
    row,
    roster: roster.filter((r) => r.session_id === row.id),
    messageCount: countBy.get(row.id) ?? 0,
  }));
}

/**
 * Puts a durable document in the session's roster: rebinds `slotId` when given, reuses the
 * slot already holding the document, or opens a new slot ("primary" first, then "doc_<hex>").
 * With `focus`, it becomes the only focused slot. NotFoundError for a foreign session.
 */
export async function attachDocument(
  db: Knex,
  ownerId: string,
  input: {
    sessionId: string;
    durableDocumentId: string;
    title: string;
    focus: boolean;
    versionId: string;
    slotId?: string;
  },
): Promise<RosterRow> {
  return db.transaction(async (trx) => {
    const session = await trx<SessionRow>(T.sessions)
      .where({ id: input.sessionId, owner_id: ownerId })
      .forUpdate()
      .first();
    if (!session) throw new NotFoundError("Session not found");
    const all = await trx<RosterRow>(T.roster).where({ session_id: session.id });
    const existing =
      (input.slotId ? all.find((r) => r.slot_id === input.slotId) : undefined) ??
      all.find((r) => r.document_id === input.durableDocumentId && r.closed_at === null);
    if (input.focus) await trx(T.roster).where({ session_id: session.id }).update({ focused: false });
    const fields = {
      document_id: input.durableDocumentId,
      title: input.title,
      last_seen_version_id: input.versionId,
      closed_at: null,
    };
    let slotId: string;
    if (existing) {
      slotId = existing.slot_id;
      await trx(T.roster)
        .where({ session_id: session.id, slot_id: slotId })
        .update({ ...fields, ...(input.focus ? { focused: true } : {}) });
    } else {
      slotId = all.some((r) => r.slot_id === "primary") ? `doc_${randomBytes(4).toString("hex")}` : "primary";
      const position = all.reduce((max, r) => Math.max(max, r.position + 1), 0);
      await trx(T.roster).insert({
        session_id: session.id,
        slot_id: slotId,
        position,
        focused: input.focus || all.every((r) => r.closed_at !== null),
        ...fields,
      });
    }
    await trx(T.sessions).where({ id: session.id }).update({ updated_at: trx.fn.now() });
    return (await trx<RosterRow>(T.roster).where({ session_id: session.id, slot_id: slotId }).first()) as RosterRow;
  });
}

/**
 * Appends a turn: the user's message and the AI's reply share the next turn index; the roster's
 * last-seen version and title follow the document the turn worked on. Returns the turn index.
 */
export async function appendTurn(
  db: Knex,
  ownerId: string,
  input: {
    sessionId: string;
    userMessage: string;
    aiMessage: string;
    checkpointVersionId: string;
    durableDocumentId: string;
    versionId: string;
    title: string;
  },
): Promise<number> {
  return db.transaction(async (trx) => {
    const [session] = await trx<SessionRow>(T.sessions)
      .where({ id: input.sessionId, owner_id: ownerId })
      .increment("next_turn_index", 1)
      .update({ updated_at: trx.fn.now() })
      .returning(["next_turn_index", "title"]);
    if (!session) throw new NotFoundError("Session not found");
    const turnIndex = session.next_turn_index - 1;
    const base = { session_id: input.sessionId, turn_index: turnIndex, checkpoint_id: input.checkpointVersionId };
    await trx(T.messages).insert([
      { id: randomUUID(), ...base, sender: "user", content: input.userMessage },
      { id: randomUUID(), ...base, sender: "ai", content: input.aiMessage },
    ]);
    if (!session.title) {
      await trx(T.sessions)
        .where({ id: input.sessionId })
        .update({ title: (input.title || input.userMessage).slice(0, TITLE_CHARS) });
    }
    if (input.durableDocumentId && input.versionId) {
      await trx(T.roster)
        .where({ session_id: input.sessionId, document_id: input.durableDocumentId })
        .whereNull("closed_at")
        .update({ last_seen_version_id: input.versionId, ...(input.title ? { title: input.title } : {}) });
    }
    return turnIndex;
  });
}

/** The active history in order (user before ai within a turn). NotFoundError for a foreign session. */
export async function getHistory(
  db: Knex,
  ownerId: string,
  sessionId: string,
): Promise<{ view: SessionView; messages: MessageRow[] }> {
  const v = await getSession(db, ownerId, sessionId);
  const messages = await db<MessageRow>(T.messages)
    .where({ session_id: sessionId, active: true })
    .orderBy([
      { column: "turn_index", order: "asc" },
      { column: "created_at", order: "asc" },
      { column: "sender", order: "desc" },
    ]);
  return { view: v, messages };
}
