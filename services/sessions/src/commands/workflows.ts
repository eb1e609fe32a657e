// Workspace workflows that write to both documents and sessions. They live here, behind one RPC
// each, so a workflow has one owner: the gateway makes one call and only maps the answer.
import type { commonSourceV1, commonV1 } from "@redline/grpc-stubs";
import { type CallOpts, ConflictError, NotFoundError, required } from "@redline/service-kit";
import type { SessionsContext } from "../context.js";
import type { RosterRow } from "../db/tables.js";
import { type EditorActionInput, recordEditorActions } from "./editor-actions.js";
import {
  attachDocument,
  listDocumentHolders,
  markSeen,
  openDocuments,
  resolveDocument,
  unlinkDocument,
} from "./roster.js";
import { ensureSession, getSession, type SessionView } from "./sessions.js";

/** The documents calls a workflow makes carry the caller's identity and the call's deadline. */
type Deps = Pick<SessionsContext, "db" | "documents" | "library">;

const chunksHtml = (chunks: { html: string }[]) => chunks.map((c) => c.html).join("\n");

/** What a save wrote. `html` is the document at the new head. */
export interface SlotSaved {
  durableId: string;
  versionId: string;
  changed: string[];
  merged: boolean;
  html: string;
  created: boolean;
}

/**
 * Saves HTML into a slot: a blank tab's first save creates its durable document and attaches it
 * to the slot; later saves merge at chunk level against `baseVersionId` (default: the version the
 * slot last saw, where this session's own later saves do not clash), then the slot records the
 * new version. 409 chunk_conflict comes from documents.
 */
async function saveInto(
  deps: Deps,
  ownerId: string,
  fwd: CallOpts,
  entry: RosterRow,
  input: { html: string; baseVersionId: string },
): Promise<SlotSaved> {
  if (!entry.document_id) return createFromSlot(deps, ownerId, fwd, entry, input.html);
  return (await saveOnto(deps, ownerId, fwd, entry, entry.document_id, input)).saved;
}

/** A blank tab's first save: its durable document, created once however often the save is retried. */
async function createFromSlot(
  deps: Deps,
  ownerId: string,
  fwd: CallOpts,
  entry: RosterRow,
  html: string,
): Promise<SlotSaved> {
  const sessionId = entry.session_id;
  const title = entry.title === "Untitled document" ? "" : entry.title;
  // Keyed to this slot (its opening time tells a re-created session's slot apart): a save retried
  // after sessions died between the create and the attach gets that document, not a second copy.
  const idempotencyKey = `first-save:${sessionId}:${entry.slot_id}:${entry.opened_at.toISOString()}`;
  const created = await deps.documents.createDocument({ html, title, sessionId, idempotencyKey }, fwd);
  const meta = required(created.document, "CreateDocumentResponse.document");
  const attach = { durableDocumentId: meta.documentId, title: meta.title, versionId: meta.versionId };
  const slot = await attachDocument(deps.db, ownerId, { sessionId, ...attach, focus: false, slotId: entry.slot_id });
  if (created.replayed) {
    // The retry's HTML may have moved on from the first attempt's: saved on top. To the client
    // this save still created the document, so every chunk is new to it.
    const again = await saveOnto(deps, ownerId, fwd, slot, meta.documentId, { html, baseVersionId: meta.versionId });
    return { ...again.saved, changed: again.chunkIds, created: true };
  }
  const changed = created.chunks.map((c) => c.chunkId);
  return {
    durableId: meta.documentId,
    versionId: meta.versionId,
    changed,
    merged: false,
    html: chunksHtml(created.chunks),
    created: true,
  };
}

/** A save onto the slot's durable document (saveInto), with the chunk ids of the new head. */
async function saveOnto(
  deps: Deps,
  ownerId: string,
  fwd: CallOpts,
  entry: RosterRow,
  documentId: string,
  input: { html: string; baseVersionId: string },
): Promise<{ saved: SlotSaved; chunkIds: string[] }> {
  const sessionId = entry.session_id;
  // Without the client's base, the slot's record is the base, which misses a save whose answer
  // was lost before markSeen: documents lets this session's own saves since it not clash.
  const baseIsLastSeen = !input.baseVersionId;
  const baseVersionId = input.baseVersionId || entry.last_seen_version_id;
  const saved = await deps.library.saveDocument(
    { documentId, html: input.html, baseVersionId, sessionId, baseIsLastSeen },
    fwd,
  );
  const meta = required(saved.document, "SaveDocumentResponse.document");
  await markSeen(deps.db, ownerId, { sessionId, slotId: entry.slot_id, versionId: meta.versionId, title: meta.title });
  const { changedChunkIds: changed, merged } = saved;
  return {
    saved: {
      durableId: meta.documentId,
      versionId: meta.versionId,
      changed,
      merged,
      html: chunksHtml(saved.chunks),
      created: false,
    },
    chunkIds: saved.chunks.map((c) => c.chunkId),
  };
}

/** Records editor actions sent with a save; an action without a document names the slot. */
async function recordActionsOf(deps: Deps, ownerId: string, entry: RosterRow, actions: EditorActionInput[]) {
  if (actions.length === 0) return;
  const named = actions.map((a) => ({ ...a, documentId: a.documentId || entry.slot_id }));
  await recordEditorActions(deps.db, ownerId, entry.session_id, named);
}

/** A save into a session's slot, with the editor actions sent alongside it. */
export interface SaveToSlotInput {
  sessionId: string;
  documentRef: string;
  html: string;
  baseVersionId: string;
  editorActions: EditorActionInput[];
}

/**
 * Human save (endpoint 14): the slot `documentRef` names (404 when not open), saved as saveInto
 * says, then the editor actions recorded. Returns the slot as it was and what the save wrote.
 */
export async function saveToSlot(
  deps: Deps,
  ownerId: string,
  fwd: CallOpts,
  input: SaveToSlotInput,
): Promise<{ entry: RosterRow; saved: SlotSaved }> {
  const { sessionId } = input;
  const entry = await resolveDocument(deps.db, ownerId, {
    sessionId,
    documentRef: input.documentRef,
    includeClosed: false,
  });
  const saved = await saveInto(deps, ownerId, fwd, entry, input);
  await recordActionsOf(deps, ownerId, entry, input.editorActions);
  return { entry, saved };
}

/** A restore within a session; `html` absent means no save on top. */
export interface UnarchiveInSessionInput {
  sessionId: string;
  documentRef: string;
  html?: string;
  baseVersionId: string;
  editorActions: EditorActionInput[];
}

/** The slot's durable id when the session holds `ref` (closed slots too), else `ref` itself. */
async function durableIdOf(deps: Deps, ownerId: string, sessionId: string, ref: string): Promise<string> {
  try {
    const entry = await resolveDocument(deps.db, ownerId, { sessionId, documentRef: ref, includeClosed: true });
    return entry.document_id ?? ref;
  } catch (err) {
    if (err instanceof NotFoundError) return ref;
    throw err;
  }
}

/**
 * Session-form unarchive (endpoint 18): restores the document, re-opens it focused and, with
 * `html`, saves on top. Idempotent; an unknown or foreign id changes nothing (`found` false).
 * NotFoundError for a foreign session.
 */
export async function unarchiveInSession(
  deps: Deps,
  ownerId: string,
  fwd: CallOpts,
  input: UnarchiveInSessionInput,
): Promise<{ view: SessionView; found: boolean; unarchived: boolean; durableId: string }> {
  const { sessionId } = input;
  const before = await getSession(deps.db, ownerId, sessionId);
  const documentId = await durableIdOf(deps, ownerId, sessionId, input.documentRef);
  const res = await deps.library.unarchiveDocument({ documentId, sessionId }, fwd);
  // Unknown (or another owner's) id: nothing to restore, nothing revealed.
  if (!res.found || !res.document) return { view: before, found: false, unarchived: false, durableId: "" };
  const meta = res.document;
  const doc = { durableDocumentId: meta.documentId, title: meta.title, versionId: meta.versionId };
  const opened = await openDocuments(deps.db, ownerId, { sessionId, documents: [doc] });
  let view = opened.view;
  const entry = opened.opened[0];
  if (input.html !== undefined && entry) {
    await saveInto(deps, ownerId, fwd, entry, { html: input.html, baseVersionId: input.baseVersionId });
    await recordActionsOf(deps, ownerId, entry, input.editorActions);
    view = await getSession(deps.db, ownerId, sessionId);
  }
  return { view, found: true, unarchived: res.unarchived, durableId: meta.documentId };
}

/**
 * Archive (endpoint 7): NotFoundError when not the caller's; ConflictError 409 document_in_use
 * when other sessions than `fromSession` hold it open, unless `force`; then archives and unlinks
 * it from every session. An archive that archives nothing never answers 2xx (interface-spec
 * rule 10): an already archived document gets ConflictError 409 `already_archived`, after its
 * leftover session links (an archive interrupted before the unlink) are removed.
 */
export async function archiveDocument(
  deps: Deps,
  ownerId: string,
  fwd: CallOpts,
  input: { documentId: string; fromSession: string; force: boolean },
): Promise<{ documentId: string; alreadyArchived: boolean; unlinkedSessions: number }> {
  const { documents } = await deps.library.getDocumentsMeta({ documentIds: [input.documentId] }, fwd);
  const meta = documents[0];
  if (!meta) throw new NotFoundError("Document not found");
  if (meta.archived) return alreadyArchived(deps, ownerId, meta.documentId);
  const holders = await listDocumentHolders(deps.db, ownerId, {
    documentIds: [meta.documentId],
    excludeSessionId: input.fromSession,
  });
  const openElsewhere = holders.filter((h) => h.document_id === meta.documentId).length;
  if (openElsewhere > 0 && !input.force) {
    throw new ConflictError(`The document is open in ${openElsewhere} other session(s)`, {
      code: "document_in_use",
      open_in_sessions: openElsewhere,
      suggested_action: "close_in_other_sessions_or_retry_with_force",
    });
  }
  const archived = await deps.library.archiveDocument(
    { documentId: meta.documentId, sessionId: input.fromSession },
    fwd,
  );
  // A concurrent archive won the race: this call archived nothing.
  if (archived.alreadyArchived) return alreadyArchived(deps, ownerId, meta.documentId);
  const unlinked = await unlinkDocument(deps.db, ownerId, meta.documentId);
  return { documentId: meta.documentId, alreadyArchived: false, unlinkedSessions: unlinked.length };
}

/** Finishes an interrupted archive's unlink, then refuses: nothing was archived by this call. */
async function alreadyArchived(deps: Deps, ownerId: string, documentId: string): Promise<never> {
  await unlinkDocument(deps.db, ownerId, documentId);
  throw new ConflictError("The document is already archived; restore it with POST /v1/documents/{id}/unarchive", {
    code: "already_archived",
  });
}

/** Converted upload content to store and open. */
export interface StoreAndAttachInput {
  sessionId: string;
  /** "replace" loads into the focused document; "background" keeps the focus; others focus it. */
  openMode: string;
  html: string;
  title: string;
  /** From the file; undefined when it has none. */
  pageSetup?: commonV1.PageSetup;
  keepParts: boolean;
  /** The original file the HTML was converted from (ingest kept it); undefined when none. */
  source?: commonSourceV1.SourceRef;
  /** A new document is created once per key (a client's retried upload). */
  idempotencyKey?: string;
}

/** Stores the content: a new version of the focused document for `replace`, else a new document; its slot. */
async function storeUpload(deps: Deps, fwd: CallOpts, view: SessionView, input: StoreAndAttachInput) {
  const sessionId = view.row.id;
  const focused = view.roster.find((e) => e.focused) ?? view.roster[0];
  const { html, title, pageSetup, keepParts, source, idempotencyKey } = input;
  if (input.openMode === "replace" && focused?.document_id) {
    const replace = { documentId: focused.document_id, html, sessionId, pageSetup, title, keepParts, source };
    return { stored: await deps.documents.replaceDocument(replace, fwd), slotId: focused.slot_id };
  }
  const create = { html, title, pageSetup, sessionId, keepParts, source, idempotencyKey };
  const stored = await deps.documents.createDocument(create, fwd);
  // A blank (or missing) focused tab gets the new document in its slot.
  return { stored, slotId: input.openMode === "replace" && focused ? focused.slot_id : "" };
}

/**
 * Upload into a session (unshown-parts.md, Uploads): ensures the session, stores the converted
 * content (storeUpload), attaches it (focused unless `background`) and returns the stored
 * document, its slot, its HTML and the session's roster after the attach.
 */
export async function storeAndAttach(deps: Deps, ownerId: string, fwd: CallOpts, input: StoreAndAttachInput) {
  const { view } = await ensureSession(deps.db, ownerId, input.sessionId);
  const sessionId = view.row.id;
  const { stored, slotId } = await storeUpload(deps, fwd, view, input);
  const meta = required(stored.document, "document");
  const attached = await attachDocument(deps.db, ownerId, {
    sessionId,
    durableDocumentId: meta.documentId,
    title: meta.title,
    focus: input.openMode !== "background",
    versionId: meta.versionId,
    slotId: slotId || undefined,
  });
  const after = await getSession(deps.db, ownerId, sessionId);
  return { sessionId, slotId: attached.slot_id, meta, html: chunksHtml(stored.chunks), roster: after.roster };
}
