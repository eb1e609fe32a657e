// The session routes: list sessions, a session's history, and clearing the memory note.
import type { documentsV1 } from "@redline/grpc-stubs";
import { RedlineError } from "@redline/service-kit";
import { defineRoute, type Route } from "../../route-registry.js";
import { attachmentToJson } from "../attachments/mappers.js";
import { editorActionJson } from "../roster/mappers.js";
import { answers, endpoint } from "../shared/routes.js";
import { SessionPathSchema } from "../shared/schemas.js";
import { documentStateToJson, historyMessageToJson, pickRosterEntry, sessionSummaryToJson } from "./mappers.js";
import * as schemas from "./schemas.js";

/** GET /v1/sessions → `{sessions, total}`, most recent activity first. */
export const listSessionsRoute = defineRoute({
  ...endpoint("GET /v1/sessions", "listSessions", "List sessions", "sessions"),
  request: { query: schemas.ListSessionsQuerySchema },
  ...answers(schemas.SessionListResponseSchema, "The caller's sessions, most recent activity first.", [503]),
  async handle({ query }, call) {
    const res = await call.ctx.sessions.listSessions({ limit: query.limit, offset: query.offset }, call.rpc());
    const sessions = res.sessions.map(sessionSummaryToJson);
    return { body: { sessions, total: sessions.length } };
  },
});

/**
 * GET /v1/sessions/{session_id}/history → messages, the restored document (the entry named by
 * focus_document_id when it is open, else the focused one) and editor_action. 404 for an unknown
 * session or another owner's.
 */
export const sessionHistoryRoute = defineRoute({
  ...endpoint(
    "GET /v1/sessions/{session_id}/history",
    "getSessionHistory",
    "Restore conversation and document state",
    "sessions",
  ),
  request: { params: SessionPathSchema, query: schemas.HistoryQuerySchema },
  ...answers(
    schemas.HistoryResponseSchema,
    "Message history, the document HTML with chunk ids kept, attachments and editor actions.",
    [404, 503],
  ),
  async handle({ params, query }, call) {
    const [history, editorActions, files] = await Promise.all([
      call.ctx.sessions.getHistory({ sessionId: params.session_id }, call.rpc()),
      call.ctx.workspace.listEditorActions({ sessionId: params.session_id }, call.rpc()),
      call.ctx.files.listAttachments({ sessionId: params.session_id }, call.rpc()),
    ]);
    // The session's attachments (upload order), in the history and in the restored document state.
    const attachments = files.attachments.map(attachmentToJson);
    const roster = history.session?.roster ?? [];
    const entry = pickRosterEntry(roster, query.focus_document_id);
    // Restoring onto a named document makes it the session's focus too, so the next turn edits it.
    if (query.focus_document_id && entry && !entry.focused) {
      await call.ctx.workspace.focusDocument(
        { sessionId: params.session_id, documentRef: entry.documentId },
        call.rpc(),
      );
    }
    let doc: documentsV1.GetDocumentResponse | undefined;
    if (entry?.durableDocumentId) {
      try {
        doc = await call.ctx.documents.getDocument(
          { documentId: entry.durableDocumentId, versionId: "", includeChunks: true },
          call.rpc(),
        );
      } catch (err) {
        // A document that vanished (or left the owner) must not make the conversation unreadable.
        if (!(err instanceof RedlineError && err.httpStatus === 404)) throw err;
        call.log.warn({ documentId: entry.durableDocumentId }, "history: roster document not found");
      }
    }
    const documentState =
      entry && (doc || !entry.durableDocumentId)
        ? documentStateToJson(entry, doc, query.include_document_html, attachments)
        : null;
    return {
      body: {
        session_id: history.session?.sessionId || params.session_id,
        messages: history.messages.map(historyMessageToJson),
        document_state: documentState,
        attachments,
        editor_actions: editorActions.actions.map(editorActionJson),
        editor_action: documentState ? ("update" as const) : ("clear" as const),
      },
    };
  },
});

/** `{removed, memory_key}`; removed is 0 when nothing existed. */
export const clearMemoryRoute = defineRoute({
  ...endpoint("DELETE /v1/users/me/cross-session-memory", "clearCrossSessionMemory", "Clear memory note", "memory"),
  request: { query: schemas.MemoryQuerySchema },
  ...answers(schemas.ClearMemoryResponseSchema, "How many notes were removed.", [503]),
  async handle({ query }, call) {
    const res = await call.ctx.workspace.clearMemoryNote({ memoryKey: query.memory_key ?? "" }, call.rpc());
    return { body: { removed: res.removed, memory_key: query.memory_key ?? undefined } };
  },
});

/** The sessions routes, in documentation order (api/index.ts mounts every area's list). */
export const sessionsRoutes: Route[] = [listSessionsRoute, sessionHistoryRoute, clearMemoryRoute];
