// Binds each RPC of the three sessions.v1 services to its file, with the service context.
import { sessionsCheckpointsV1, sessionsV1, sessionsWorkspaceV1 } from "@redline/grpc-stubs";
import { bindService, type CallContext, type ServiceBinding } from "@redline/service-kit";
import type { SessionsContext } from "../context.js";
import { appendTurn } from "./append-turn.js";
import { applyRevert } from "./apply-revert.js";
import { archiveDocument } from "./archive-document.js";
import { attachDocument } from "./attach-document.js";
import { clearMemoryNote } from "./clear-memory-note.js";
import { closeDocument } from "./close-document.js";
import { ensureSession } from "./ensure-session.js";
import { focusDocument } from "./focus-document.js";
import { getHistory } from "./get-history.js";
import { getRevert } from "./get-revert.js";
import { getSession } from "./get-session.js";
import { getTurnContext } from "./get-turn-context.js";
import { listDocumentHolders } from "./list-document-holders.js";
import { listEditorActions } from "./list-editor-actions.js";
import { listSessions } from "./list-sessions.js";
import { listWatchedDocuments } from "./list-watched-documents.js";
import { markSeen } from "./mark-seen.js";
import { openBlank } from "./open-blank.js";
import { openDocuments } from "./open-documents.js";
import { planRevert } from "./plan-revert.js";
import { recordEditorActions } from "./record-editor-actions.js";
import { resolveDocument } from "./resolve-document.js";
import { saveToSlot } from "./save-to-slot.js";
import { storeAndAttach } from "./store-and-attach.js";
import type { Rpc } from "./types.js";
import { unarchiveInSession } from "./unarchive-in-session.js";
import { undoRevert } from "./undo-revert.js";
import { unlinkDocument } from "./unlink-document.js";

// biome-ignore lint/suspicious/noExplicitAny: each Rpc keeps its own request and response types
type Rpcs = Record<string, Rpc<any, any>>;
type Bound<R extends Rpcs> = {
  [K in keyof R]: R[K] extends Rpc<infer Req, infer Res> ? (req: Req, call: CallContext) => Promise<Res> : never;
};

/** Gives every RPC of `rpcs` the context, as bindService expects `(request, call)` handlers. */
function withContext<R extends Rpcs>(ctx: SessionsContext, rpcs: R): Bound<R> {
  const entries = Object.entries(rpcs).map(([name, rpc]) => [
    name,
    (req: unknown, call: CallContext) => rpc(ctx, req, call),
  ]);
  return Object.fromEntries(entries) as Bound<R>;
}

/** sessions.v1.SessionsService: sessions, attach, turns and history. */
export function sessionsHandlers(ctx: SessionsContext): ServiceBinding {
  const rpcs = { ensureSession, getSession, listSessions, attachDocument, appendTurn, getHistory, getTurnContext };
  return bindService(sessionsV1.SessionsServiceService, withContext(ctx, rpcs));
}

/** sessions.v1.SessionWorkspaceService: roster, holders, editor actions, memory, and the workspace workflows. */
export function workspaceHandlers(ctx: SessionsContext): ServiceBinding {
  const roster = { openDocuments, openBlank, resolveDocument, focusDocument, closeDocument, markSeen };
  const holders = { listDocumentHolders, unlinkDocument, listWatchedDocuments };
  const other = { recordEditorActions, listEditorActions, clearMemoryNote };
  const workflows = { saveToSlot, unarchiveInSession, archiveDocument, storeAndAttach };
  return bindService(
    sessionsWorkspaceV1.SessionWorkspaceServiceService,
    withContext(ctx, { ...roster, ...holders, ...other, ...workflows }),
  );
}

/** sessions.v1.SessionCheckpointsService: revert and redo-revert. */
export function checkpointsHandlers(ctx: SessionsContext): ServiceBinding {
  const rpcs = { planRevert, applyRevert, getRevert, undoRevert };
  return bindService(sessionsCheckpointsV1.SessionCheckpointsServiceService, withContext(ctx, rpcs));
}
