// A session's roster of open documents: attach, open, blank tab, resolve, focus, close, seen
// versions, who holds a document, unlink on archive, and the documents a session watches.
import { randomBytes } from "node:crypto";
import { InputError, isUuid, type Knex, NotFoundError } from "@redline/service-kit";
import {
  archiveSlotsOf,
  closeSlot,
  documentHolders,
  findSlot,
  focusOnly,
  insertSlot,
  markSlotSeen,
  openSlotsInOrder,
  rosterOf,
  updateSlot,
  upsertAttachedSlot,
  watchedSlots,
} from "../db/store/roster.js";
import { findSession, lockSessionRow, lockSessionWithRoster, touchSession } from "../db/store/sessions.js";
import type { HolderRow, RosterRow } from "../db/tables.js";
import { getSession, type SessionView } from "./sessions.js";

/** A durable document to put in a session's roster. */
export interface AttachInput {
  sessionId: string;
  durableDocumentId: string;
  title: string;
  focus: boolean;
  versionId: string;
  slotId?: string;
}

/** "primary" for a session's first slot, then "doc_<hex>". */
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

async function lockOwned(trx: Knex.Transaction, ownerId: string, sessionId: string): Promise<void> {
  if (!(await lockSessionRow(trx, ownerId, sessionId))) throw new NotFoundError("Session not found");
}

/** Locks the owner's session and finds the open slot `ref` names, with the whole roster; NotFoundError when none. */
async function lockedOpenSlot(trx: Knex.Transaction, ownerId: string, sessionId: string, ref: string) {
  await lockOwned(trx, ownerId, sessionId);
  const rows = await rosterOf(trx, ownerId, sessionId);
  const hit = matchSlot(rows, ref, false);
  if (!hit) throw new NotFoundError("Document not open in this session");
  return { rows, hit };
}

/** Focuses `slotId` alone and touches the session; returns `slotId`. */
async function focusAlone(trx: Knex.Transaction, ownerId: string, sessionId: string, slotId: string) {
  await focusOnly(trx, ownerId, sessionId, slotId);
  await touchSession(trx, ownerId, sessionId);
  return slotId;
}

/** The refreshed session and its slot `slotId` (open, so in the view). */
async function viewWithSlot(db: Knex, ownerId: string, sessionId: string, slotId: string) {
  const view = await getSession(db, ownerId, sessionId);
  return { view, entry: view.roster.find((r) => r.slot_id === slotId) as RosterRow };
}

/**
 * The attach write on a locked session whose whole roster is `all`: rebinds `slotId` when given,
 * reuses the open slot holding the document, or opens a new one; a new slot is focused when
 * asked or when it is the only open one.
 */
export async function attachLocked(
  trx: Knex.Transaction,
  ownerId: string,
  all: RosterRow[],
  input: AttachInput,
): Promise<RosterRow> {
  const existing =
    (input.slotId ? all.find((r) => r.slot_id === input.slotId) : undefined) ??
    all.find((r) => r.document_id === input.durableDocumentId && r.closed_at === null);
  return upsertAttachedSlot(trx, ownerId, {
    sessionId: input.sessionId,
    slotId: existing?.slot_id ?? newSlotId(all),
    position: nextPosition(all),
    focusedIfNew: input.focus || all.every((r) => r.closed_at !== null),
    focus: input.focus,
    durableDocumentId: input.durableDocumentId,
    title: input.title,
    versionId: input.versionId,
  });
}

/**
 * Puts a durable document in the session's roster: rebinds `slotId` when given, reuses the
 * slot already holding the document, or opens a new slot ("primary" first, then "doc_<hex>").
 * With `focus`, it becomes the only focused slot. NotFoundError for a foreign session.
 */
export async function attachDocument(db: Knex, ownerId: string, input: AttachInput): Promise<RosterRow> {
  return db.transaction(async (trx) => {
    const locked = await lockSessionWithRoster(trx, ownerId, input.sessionId, "");
    if (!locked) throw new NotFoundError("Session not found");
    return attachLocked(trx, ownerId, locked.roster, input);
  });
}

/** One document to open: its durable id, roster title and the head version the session sees. */
export interface DocumentToOpen {
  durableDocumentId: string;
  title: string;
  versionId: string;
}

/** Opens one document on a locked session whose roster is `rows` (updated in place); its slot id. */
async function openOne(
  trx: Knex.Transaction,
  ownerId: string,
  sessionId: string,
  rows: RosterRow[],
  doc: DocumentToOpen,
) {
  const fields = {
    document_id: doc.durableDocumentId,
    title: doc.title,
    last_seen_version_id: doc.versionId,
    closed_at: null,
    closed_reason: null,
  };
  const existing = matchSlot(rows, doc.durableDocumentId, true);
  if (existing) {
    await updateSlot(trx, ownerId, sessionId, existing.slot_id, fields);
    existing.closed_at = null;
    return existing.slot_id;
  }
  const row = {
    owner_id: ownerId,
    session_id: sessionId,
    slot_id: newSlotId(rows),
    position: nextPosition(rows),
    focused: false,
    opened_at: new Date(),
    ...fields,
  };
  await insertSlot(trx, row);
  rows.push(row);
  return row.slot_id;
}

/**
 * Opens durable documents in the session (endpoints 9, 10, 12): attached, never copied. A
 * document already open keeps its slot; one closed earlier (or unlinked by an archive) gets its
 * slot back; others get new slots. The first listed is focused. InputError for a non-UUID id,
 * NotFoundError for a foreign session.
 */
export async function openDocuments(
  db: Knex,
  ownerId: string,
  input: { sessionId: string; documents: DocumentToOpen[] },
): Promise<{ view: SessionView; opened: RosterRow[] }> {
  if (input.documents.some((d) => !isUuid(d.durableDocumentId)))
    throw new InputError("document ids must be durable document UUIDs");
  const slotIds = await db.transaction(async (trx) => {
    await lockOwned(trx, ownerId, input.sessionId);
    const rows = await rosterOf(trx, ownerId, input.sessionId);
    const ids: string[] = [];
    for (const doc of input.documents) ids.push(await openOne(trx, ownerId, input.sessionId, rows, doc));
    if (ids.length > 0) await focusOnly(trx, ownerId, input.sessionId, ids[0]);
    await touchSession(trx, ownerId, input.sessionId);
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
  const blank = db.transaction(async (trx) => {
    await lockOwned(trx, ownerId, input.sessionId);
    const rows = await rosterOf(trx, ownerId, input.sessionId);
    const id = newSlotId(rows);
    await insertSlot(trx, {
      owner_id: ownerId,
      session_id: input.sessionId,
      slot_id: id,
      document_id: null,
      title: input.title || "Untitled document",
      position: nextPosition(rows),
      focused: false,
      last_seen_version_id: "",
    });
    return focusAlone(trx, ownerId, input.sessionId, id);
  });
  return viewWithSlot(db, ownerId, input.sessionId, await blank);
}

/** The slot `ref` names in the session (slot id or durable id); NotFoundError when none. */
export async function resolveDocument(
  db: Knex,
  ownerId: string,
  input: { sessionId: string; documentRef: string; includeClosed: boolean },
): Promise<RosterRow> {
  // The roster read is scoped to the owner's session; no rows and no session both read as 404.
  if (!(await findSession(db, ownerId, input.sessionId))) throw new NotFoundError("Session not found");
  const hit = matchSlot(await rosterOf(db, ownerId, input.sessionId), input.documentRef, input.includeClosed);
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
    const { hit } = await lockedOpenSlot(trx, ownerId, input.sessionId, input.documentRef);
    return focusAlone(trx, ownerId, input.sessionId, hit.slot_id);
  });
  return viewWithSlot(db, ownerId, input.sessionId, slotId);
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
    const { rows, hit } = await lockedOpenSlot(trx, ownerId, input.sessionId, input.documentRef);
    await closeSlot(trx, ownerId, input.sessionId, hit.slot_id, "closed");
    const open = rows
      .filter((r) => r.closed_at === null && r.slot_id !== hit.slot_id)
      .sort((a, b) => a.position - b.position);
    if (hit.focused && open.length > 0) {
      const asked = input.nextFocus ? matchSlot(open, input.nextFocus, false) : undefined;
      const next = asked ?? open.find((r) => r.position > hit.position) ?? open[open.length - 1];
      await focusOnly(trx, ownerId, input.sessionId, next.slot_id);
    }
    await touchSession(trx, ownerId, input.sessionId);
    return hit.slot_id;
  });
  const [view, closed] = await Promise.all([
    getSession(db, ownerId, input.sessionId),
    findSlot(db, ownerId, input.sessionId, closedSlot),
  ]);
  return { view, closed: closed as RosterRow };
}

/** Records the version the session saw or wrote in one slot (and its title when given); one statement. */
export async function markSeen(
  db: Knex,
  ownerId: string,
  input: { sessionId: string; slotId: string; versionId: string; title: string },
): Promise<RosterRow> {
  // The composite foreign key makes an (owner, session) roster row imply the owner's session.
  const row = await markSlotSeen(db, ownerId, input);
  if (!row) throw new NotFoundError("Document not open in this session");
  return row;
}

/** The owner's sessions holding `documentIds` open, most recent first, leaving out `excludeSessionId`. */
export async function listDocumentHolders(
  db: Knex,
  ownerId: string,
  input: { documentIds: string[]; excludeSessionId: string },
): Promise<HolderRow[]> {
  const ids = [...new Set(input.documentIds.filter(isUuid))];
  if (ids.length === 0) return [];
  return documentHolders(db, ownerId, ids, input.excludeSessionId);
}

/**
 * Closes a document in every session of the owner (archive), marking the slots "archived" so
 * those sessions keep receiving its events; a session that had it focused focuses its next
 * open document. Returns the session ids.
 */
export async function unlinkDocument(db: Knex, ownerId: string, documentId: string): Promise<string[]> {
  if (!isUuid(documentId)) return [];
  return db.transaction(async (trx) => {
    const rows = await archiveSlotsOf(trx, ownerId, documentId);
    const sessionIds = [...new Set(rows.map((r) => r.session_id))];
    for (const sessionId of sessionIds) {
      await focusFirstIfNone(trx, ownerId, sessionId);
      await touchSession(trx, ownerId, sessionId);
    }
    return sessionIds;
  });
}

/** When no open slot of the session is focused, focuses the first open one in tab order. */
export async function focusFirstIfNone(trx: Knex.Transaction, ownerId: string, sessionId: string): Promise<void> {
  const open = await openSlotsInOrder(trx, ownerId, sessionId);
  if (open.length > 0 && !open.some((r) => r.focused)) await focusOnly(trx, ownerId, sessionId, open[0].slot_id);
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
  const rows = await watchedSlots(db, ownerId, sessionId);
  if (rows.length === 0) throw new NotFoundError("Session not found");
  const byDocument = new Map<string, string>();
  for (const r of rows) {
    if (!r.document_id) continue;
    if (r.closed_at === null || !byDocument.has(r.document_id))
      byDocument.set(r.document_id, r.closed_at === null ? (r.slot_id ?? "") : "");
  }
  return [...byDocument].map(([documentId, slotId]) => ({ documentId, slotId }));
}
