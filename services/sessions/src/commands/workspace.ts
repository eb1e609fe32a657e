// A session's workspace: the roster of open documents (open, blank tab, focus, close, unlink
// on archive), who holds a document, editor actions and cross-session memory notes.
import { randomBytes } from "node:crypto";
import { InputError, type Knex, NotFoundError } from "@redline/service-kit";
import { SCHEMA } from "../migrations.js";
import type { EditorActionRow, RosterRow, SessionRow } from "../tables.js";
import { getSession, type SessionView } from "./sessions.js";

type Db = Knex | Knex.Transaction;
const T = {
  sessions: `${SCHEMA}.sessions`,
  roster: `${SCHEMA}.roster`,
  actions: `${SCHEMA}.editor_actions`,
};
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
/** Editor actions returned by a history read. */
const MAX_EDITOR_ACTIONS = 500;

async function lockSession(trx: Knex.Transaction, ownerId: string, sessionId: string): Promise<SessionRow> {
  const row = await trx<SessionRow>(T.sessions).where({ id: sessionId, owner_id: ownerId }).forUpdate().first();
  if (!row) throw new NotFoundError("Session not found");
  return row;
}

function newSlotId(rows: RosterRow[]): string {
  return rows.some((r) => r.slot_id === "primary") ? `doc_${randomBytes(4).toString("hex")}` : "primary";
}

const nextPosition = (rows: RosterRow[]) => rows.reduce((max, r) => Math.max(max, r.position + 1), 0);

/** The slot `ref` (slot id or durable id) names: open ones first, then the most recently closed. */
function matchSlot(rows: RosterRow[], ref: string, includeClosed: boolean): RosterRow | undefined {
  const hits = rows.filter((r) => r.slot_id === ref || (r.document_id !== null && r.document_id === ref));
  const open = hits.find((r) => r.closed_at === null);
  if (open || !includeClosed) return open;
  return hits.sort((a, b) => (b.closed_at?.getTime() ?? 0) - (a.closed_at?.getTime() ?? 0))[0];
}

// Session ids are scoped per owner: every statement on a session's rows names both.
async function touch(trx: Db, ownerId: string, sessionId: string): Promise<void> {
  await trx(T.sessions).where({ owner_id: ownerId, id: sessionId }).update({ updated_at: trx.fn.now() });
}

function rosterOf(trx: Db, ownerId: string, sessionId: string) {
  return trx<RosterRow>(T.roster).where({ owner_id: ownerId, session_id: sessionId });
}

async function slot(trx: Db, ownerId: string, sessionId: string, slotId: string): Promise<RosterRow> {
  return (await rosterOf(trx, ownerId, sessionId).where({ slot_id: slotId }).first()) as RosterRow;
}

/** Focuses `slotId` alone in the session. */
async function focusOnly(trx: Db, ownerId: string, sessionId: string, slotId: string): Promise<void> {
  await rosterOf(trx, ownerId, sessionId).whereNot({ slot_id: slotId }).update({ focused: false });
  await rosterOf(trx, ownerId, sessionId).where({ slot_id: slotId }).update({ focused: true });
}

/**
 * Opens durable documents in the session (endpoints 9, 10, 12): attached, never copied. A
 * document already open keeps its slot; one closed earlier (or unlinked by an archive) gets its
 * slot back; others get new slots. The first listed is focused. NotFoundError for a foreign session.
 */
export async function openDocuments(
  db: Knex,
  ownerId: string,
  input: { sessionId: string; documents: { durableDocumentId: string; title: string; versionId: string }[] },
): Promise<{ view: SessionView; opened: RosterRow[] }> {
  if (input.documents.some((d) => !UUID.test(d.durableDocumentId)))
    throw new InputError("document ids must be durable document UUIDs");
  const slotIds = await db.transaction(async (trx) => {
    await lockSession(trx, ownerId, input.sessionId);
    const rows = await rosterOf(trx, ownerId, input.sessionId);
    const ids: string[] = [];
    for (const doc of input.documents) {
      const fields = {
        document_id: doc.durableDocumentId,
        title: doc.title,
        last_seen_version_id: doc.versionId,
        closed_at: null,
        closed_reason: null,
      };
      const existing = matchSlot(rows, doc.durableDocumentId, true);
      if (existing) {
        await rosterOf(trx, ownerId, input.sessionId).where({ slot_id: existing.slot_id }).update(fields);
        existing.closed_at = null;
        ids.push(existing.slot_id);
        continue;
      }
      const row = {
        owner_id: ownerId,
        session_id: input.sessionId,
        slot_id: newSlotId(rows),
        position: nextPosition(rows),
        focused: false,
        opened_at: new Date(),
        ...fields,
      };
      await trx(T.roster).insert(row);
      rows.push(row);
      ids.push(row.slot_id);
    }
    if (ids.length > 0) await focusOnly(trx, ownerId, input.sessionId, ids[0]);
    await touch(trx, ownerId, input.sessionId);
    return ids;
  });
  const view = await getSession(db, ownerId, input.sessionId);
  const bySlot = new Map(view.roster.map((r) => [r.slot_id, r]));
  return { view, opened: slotIds.flatMap((id) => bySlot.get(id) ?? []) };
}

/** Opens a blank focused tab (endpoint 13); it gets a durable document on its first save. */
export async function openBlank(
  db: Knex,
  ownerId: string,
  input: { sessionId: string; title: string },
): Promise<{ view: SessionView; entry: RosterRow }> {
  const slotId = await db.transaction(async (trx) => {
    await lockSession(trx, ownerId, input.sessionId);
    const rows = await rosterOf(trx, ownerId, input.sessionId);
    const id = newSlotId(rows);
    await trx(T.roster).insert({
      owner_id: ownerId,
      session_id: input.sessionId,
      slot_id: id,
      document_id: null,
      title: input.title || "Untitled document",
      position: nextPosition(rows),
      focused: false,
      last_seen_version_id: "",
    });
    await focusOnly(trx, ownerId, input.sessionId, id);
    await touch(trx, ownerId, input.sessionId);
    return id;
  });
  const view = await getSession(db, ownerId, input.sessionId);
  return { view, entry: view.roster.find((r) => r.slot_id === slotId) as RosterRow };
}

/** The slot `ref` names in the session (slot id or durable id); NotFoundError when none. */
export async function resolveDocument(
  db: Knex,
  ownerId: string,
  input: { sessionId: string; documentRef: string; includeClosed: boolean },
): Promise<RosterRow> {
  // The roster read is scoped to the owner's session; no rows and no session both read as 404.
  const owned = await db<SessionRow>(T.sessions).where({ id: input.sessionId, owner_id: ownerId }).first("id");
  if (!owned) throw new NotFoundError("Session not found");
  const rows = await rosterOf(db, ownerId, input.sessionId);
  const hit = matchSlot(rows, input.documentRef, input.includeClosed);
  if (!hit) throw new NotFoundError("Document not open in this session");
  return hit;
}

/** Focuses an open document (endpoint 16). NotFoundError when the session does not hold it. */
export async function focusDocument(
  db: Knex,
  ownerId: string,
  input: { sessionId: string; documentRef: string },
): Promise<{ view: SessionView; entry: RosterRow }> {
  const slotId = await db.transaction(async (trx) => {
    await lockSession(trx, ownerId, input.sessionId);
    const rows = await rosterOf(trx, ownerId, input.sessionId);
    const hit = matchSlot(rows, input.documentRef, false);
    if (!hit) throw new NotFoundError("Document not open in this session");
    await focusOnly(trx, ownerId, input.sessionId, hit.slot_id);
    await touch(trx, ownerId, input.sessionId);
    return hit.slot_id;
  });
  const view = await getSession(db, ownerId, input.sessionId);
  return { view, entry: view.roster.find((r) => r.slot_id === slotId) as RosterRow };
}

/**
 * Closes a document in the session (endpoint 17), persisted. When it was focused, `nextFocus`
 * (slot or durable id) takes the focus if it is still open, else the next remaining document in
 * tab order (else the previous one); closing the last leaves the session empty.
 */
export async function closeDocument(
  db: Knex,
  ownerId: string,
  input: { sessionId: string; documentRef: string; nextFocus: string },
): Promise<{ view: SessionView; closed: RosterRow }> {
  const closedSlot = await db.transaction(async (trx) => {
    await lockSession(trx, ownerId, input.sessionId);
    const rows = await rosterOf(trx, ownerId, input.sessionId);
    const hit = matchSlot(rows, input.documentRef, false);
    if (!hit) throw new NotFoundError("Document not open in this session");
    await rosterOf(trx, ownerId, input.sessionId)
      .where({ slot_id: hit.slot_id })
      .update({ closed_at: trx.fn.now(), closed_reason: "closed", focused: false });
    const open = rows
      .filter((r) => r.closed_at === null && r.slot_id !== hit.slot_id)
      .sort((a, b) => a.position - b.position);
    if (hit.focused && open.length > 0) {
      const asked = input.nextFocus ? matchSlot(open, input.nextFocus, false) : undefined;
      const next = asked ?? open.find((r) => r.position > hit.position) ?? open[open.length - 1];
      await focusOnly(trx, ownerId, input.sessionId, next.slot_id);
    }
    await touch(trx, ownerId, input.sessionId);
    return hit.slot_id;
  });
  const [view, closed] = await Promise.all([
    getSession(db, ownerId, input.sessionId),
    slot(db, ownerId, input.sessionId, closedSlot),
  ]);
  return { view, closed };
}

/** Records the version the session saw or wrote in one slot (and its title when given); one statement. */
export async function markSeen(
  db: Knex,
  ownerId: string,
  input: { sessionId: string; slotId: string; versionId: string; title: string },
): Promise<RosterRow> {
  // The composite foreign key makes an (owner, session) roster row imply the owner's session.
  const updated = await db(T.roster)
    .where({ owner_id: ownerId, session_id: input.sessionId, slot_id: input.slotId })
    .update({ last_seen_version_id: input.versionId, ...(input.title ? { title: input.title } : {}) })
    .returning("*");
  if (updated.length === 0) throw new NotFoundError("Document not open in this session");
  return updated[0] as RosterRow;
}

/** One open slot of a document in one of the owner's sessions. */
export interface Holder {
  document_id: string;
  session_id: string;
  session_title: string;
  slot_id: string;
  updated_at: Date;
}

/** The owner's sessions holding `documentIds` open, most recent first, leaving out `excludeSessionId`. */
export async function listDocumentHolders(
  db: Knex,
  ownerId: string,
  input: { documentIds: string[]; excludeSessionId: string },
): Promise<Holder[]> {
  const ids = [...new Set(input.documentIds.filter((id) => UUID.test(id)))];
  if (ids.length === 0) return [];
  const q = db(`${T.roster} as r`)
    .join(`${T.sessions} as s`, (j) => j.on("s.owner_id", "=", "r.owner_id").andOn("s.id", "=", "r.session_id"))
    .select<Holder[]>("r.document_id", "r.session_id", "s.title as session_title", "r.slot_id", "s.updated_at")
    .where("s.owner_id", ownerId)
    .whereIn("r.document_id", ids)
    .whereNull("r.closed_at");
  if (input.excludeSessionId) q.whereNot("r.session_id", input.excludeSessionId);
  return q.orderBy([
    { column: "s.updated_at", order: "desc" },
    { column: "r.session_id", order: "asc" },
  ]);
}

/**
 * Closes a document in every session of the owner (archive), marking the slots "archived" so
 * those sessions keep receiving its events; a session that had it focused focuses its next
 * open document. Returns the session ids.
 */
export async function unlinkDocument(db: Knex, ownerId: string, documentId: string): Promise<string[]> {
  if (!UUID.test(documentId)) return [];
  return db.transaction(async (trx) => {
    const rows = await trx<RosterRow>(T.roster)
      .where({ owner_id: ownerId, document_id: documentId })
      .whereNull("closed_at")
      .update({ closed_at: trx.fn.now(), closed_reason: "archived", focused: false })
      .returning("*");
    const sessionIds = [...new Set(rows.map((r) => r.session_id as string))];
    for (const sessionId of sessionIds) {
      const open = await rosterOf(trx, ownerId, sessionId).whereNull("closed_at").orderBy("position", "asc");
      if (open.length > 0 && !open.some((r) => r.focused)) await focusOnly(trx, ownerId, sessionId, open[0].slot_id);
      await touch(trx, ownerId, sessionId);
    }
    return sessionIds;
  });
}

/**
 * Documents whose events the session polls: open ones (with their slot) and those an archive
 * unlinked (slot ""). NotFoundError for a foreign session. One query.
 */
export async function listWatchedDocuments(
  db: Knex,
  ownerId: string,
  sessionId: string,
): Promise<{ documentId: string; slotId: string }[]> {
  const rows = await db(`${T.sessions} as s`)
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
  if (rows.length === 0) throw new NotFoundError("Session not found");
  const byDocument = new Map<string, string>();
  for (const r of rows) {
    if (!r.document_id) continue;
    if (r.closed_at === null || !byDocument.has(r.document_id))
      byDocument.set(r.document_id, r.closed_at === null ? (r.slot_id ?? "") : "");
  }
  return [...byDocument].map(([documentId, slotId]) => ({ documentId, slotId }));
}

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
    const rows = await trx(T.actions)
      .insert(
        actions.map((a) => ({
          owner_id: ownerId,
          session_id: sessionId,
          action: a.action,
          value: a.value,
          document_id: a.documentId,
          chunk_ids: JSON.stringify(a.chunkIds),
          details: a.details ? JSON.stringify(a.details) : null,
        })),
      )
      .returning("*");
    await touch(trx, ownerId, sessionId);
    return rows as EditorActionRow[];
  });
}

/** A session's editor actions, oldest first (the last 500). NotFoundError for a foreign session. */
export async function listEditorActions(db: Knex, ownerId: string, sessionId: string): Promise<EditorActionRow[]> {
  await getSession(db, ownerId, sessionId);
  const rows = await db<EditorActionRow>(T.actions)
    .where({ owner_id: ownerId, session_id: sessionId })
    .orderBy("id", "desc")
    .limit(MAX_EDITOR_ACTIONS);
  return rows.reverse();
}
