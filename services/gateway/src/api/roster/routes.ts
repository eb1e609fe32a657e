// The roster routes under /v1/sessions/{session_id}/documents, /chunks and /editor-actions, and
// POST /v1/sessions/init.
import type { sessionsV1, sessionsWorkspaceV1 } from "@redline/grpc-stubs";
import { isUuid, required } from "@redline/service-kit";
import { defineRoute, type Route, type RouteCall } from "../../route-registry.js";
import { IncludeHtmlQuerySchema } from "../documents/schemas.js";
import { usageHeaders, usageToJson, withUsageHeaders } from "../shared/mappers.js";
import { answers, EXPENSIVE_IDEMPOTENT, endpoint } from "../shared/routes.js";
import { SessionPathSchema } from "../shared/schemas.js";
import { editorActionJson, resolveDocumentsToOpen, rosterResponse } from "./mappers.js";
import * as schemas from "./schemas.js";

type EditorActionBody = {
  action: string;
  value: string;
  document_id?: string | null;
  chunk_ids: string[];
  details?: Record<string, unknown> | null;
};

const EMPTY_SESSION: sessionsV1.Session = {
  sessionId: "",
  createdAt: undefined,
  updatedAt: undefined,
  messageCount: 0,
  title: "",
  roster: [],
};

function session(s: sessionsV1.Session | undefined): sessionsV1.Session {
  return required(s, "session");
}

/** The caller's session or 404 (unknown and foreign ids alike). */
async function getSession(call: RouteCall, sessionId: string): Promise<sessionsV1.Session> {
  return session((await call.ctx.sessions.getSession({ sessionId }, call.rpc())).session);
}

/** Opens documents (either id form) in a session, the first focused; returns the refreshed session. */
async function openIn(call: RouteCall, s: sessionsV1.Session, refs: string[]): Promise<sessionsV1.Session> {
  const metas = await resolveDocumentsToOpen(call, s, refs);
  const res = await call.ctx.workspace.openDocuments(
    {
      sessionId: s.sessionId,
      documents: metas.map((m) => ({ durableDocumentId: m.documentId, title: m.title, versionId: m.versionId })),
    },
    call.rpc(),
  );
  return session(res.session);
}

/** Stores editor actions sent with a save or on their own. */
export async function recordEditorActions(
  call: RouteCall,
  sessionId: string,
  actions: EditorActionBody[],
  defaultDocumentId = "",
): Promise<sessionsWorkspaceV1.EditorAction[]> {
  if (actions.length === 0) return [];
  const res = await call.ctx.workspace.recordEditorActions(
    {
      sessionId,
      actions: actions.map((a) => ({
        id: "",
        action: a.action,
        value: a.value,
        documentId: a.document_id ?? defaultDocumentId,
        chunkIds: a.chunk_ids,
        details: a.details ?? undefined,
        createdAt: undefined,
      })),
    },
    call.rpc(),
  );
  return res.actions;
}

/** POST /v1/sessions/init: a session (minted when no id), optionally with documents opened. */
export const initSessionRoute = defineRoute({
  ...endpoint("POST /v1/sessions/init", "initSession", "Create a session with documents", "sessions"),
  request: { query: IncludeHtmlQuerySchema, body: schemas.InitSessionSchema },
  ...answers(schemas.RosterResponseSchema, "The session and its roster.", [403, 404, 409, 503]),
  async handle({ query, body }, call) {
    const refs = body.document_ids ?? [];
    // Saved-document ids are checked before the session is created, so a bad id leaves nothing behind.
    const durableOnly = refs.every(isUuid);
    if (refs.length > 0 && durableOnly) await resolveDocumentsToOpen(call, EMPTY_SESSION, refs);
    const ensured = await call.ctx.sessions.ensureSession({ sessionId: body.session_id ?? "" }, call.rpc());
    let s = session(ensured.session);
    if (body.document_ids && body.document_ids.length > 0) s = await openIn(call, s, body.document_ids);
    return {
      body: { ...(await rosterResponse(call, s, { includeHtml: query.include_html })), created: ensured.created },
    };
  },
});

/** POST /v1/sessions/{session_id}/documents/open: attach (never copy); the first listed is focused. */
export const openDocumentsRoute = defineRoute({
  ...endpoint(
    "POST /v1/sessions/{session_id}/documents/open",
    "openDocuments",
    "Open saved documents in a session",
    "sessions",
  ),
  request: { params: SessionPathSchema, query: IncludeHtmlQuerySchema, body: schemas.OpenDocumentsSchema },
  ...answers(schemas.RosterResponseSchema, "The refreshed roster.", [404, 409, 503]),
  async handle({ params, query, body }, call) {
    const s = await openIn(call, await getSession(call, params.session_id), body.document_ids);
    return { body: await rosterResponse(call, s, { includeHtml: query.include_html }) };
  },
});

/** POST /v1/sessions/{session_id}/documents/blank: a blank focused tab, saved on first edit. */
export const blankDocumentRoute = defineRoute({
  ...endpoint("POST /v1/sessions/{session_id}/documents/blank", "openBlankDocument", "New blank tab", "sessions"),
  description: "Non-billable. durable_document_id stays null until the first save.",
  request: { params: SessionPathSchema },
  ...answers(schemas.RosterResponseSchema, "The roster with the new focused tab as `document`.", [404, 503]),
  async handle({ params }, call) {
    const res = await call.ctx.workspace.openBlank({ sessionId: params.session_id, title: "" }, call.rpc());
    const body = await rosterResponse(call, session(res.session), { includeHtml: false });
    return { body: { ...body, document: body.documents.find((d) => d.document_id === res.entry?.documentId) } };
  },
});

/** GET /v1/sessions/{session_id}/documents: the roster, focused first. */
export const listSessionDocumentsRoute = defineRoute({
  ...endpoint("GET /v1/sessions/{session_id}/documents", "listSessionDocuments", "List session documents", "sessions"),
  request: { params: SessionPathSchema, query: schemas.RosterQuerySchema },
  ...answers(schemas.RosterResponseSchema, "The roster, focused first.", [404, 503]),
  async handle({ params, query }, call) {
    const s = await getSession(call, params.session_id);
    return {
      body: await rosterResponse(call, s, { includeHtml: query.include_html, reportChanged: query.report_changed }),
    };
  },
});

/**
 * Deadline of a save (sessions then documents): linear in the chunks written, a 100,000-chunk
 * document (about 1 MB) takes seconds, more on a busy host, beyond the 10 s default.
 */
const DOCUMENT_WRITE_TIMEOUT_MS = 120_000;

/** Editor actions of a save body for the sessions service (document_id "" lets it name the slot). */
function editorActionsOf(actions: EditorActionBody[] | undefined | null): sessionsWorkspaceV1.EditorAction[] {
  return (actions ?? []).map((a) => ({
    id: "",
    action: a.action,
    value: a.value,
    documentId: a.document_id ?? "",
    chunkIds: a.chunk_ids,
    details: a.details ?? undefined,
    createdAt: undefined,
  }));
}

/** The session and the document (slot or durable id) of a /v1/sessions/{session_id}/documents/{document_id} route. */
function slotRef(params: { session_id: string; document_id: string }) {
  return { sessionId: params.session_id, documentRef: params.document_id };
}

/** The slot and the edits of a save, or of a session unarchive (without html it only restores). */
function slotEdit(
  params: { session_id: string; document_id: string },
  body: { html?: string; base_version_id?: string | null; editor_actions?: EditorActionBody[] | null } | undefined,
): sessionsWorkspaceV1.UnarchiveInSessionRequest {
  return {
    ...slotRef(params),
    html: body?.html,
    baseVersionId: body?.base_version_id ?? "",
    editorActions: editorActionsOf(body?.editor_actions),
  };
}

/**
 * POST .../documents/{document_id}/save `{html, base_version_id?, editor_actions?}`: human
 * autosave. Updates the same Files entry (other sessions see a document_updated event);
 * non-billable, no AI turn. 409 chunk_conflict names chunks another session changed since the
 * base; nothing is written and the conflicts are kept for re-edit.
 */
export const saveDocumentRoute = defineRoute({
  ...endpoint(
    "POST /v1/sessions/{session_id}/documents/{document_id}/save",
    "saveSessionDocument",
    "Human autosave",
    "sessions",
  ),
  request: { params: schemas.SessionDocumentPathSchema, body: schemas.SaveDocumentSchema },
  ...answers(schemas.SaveResponseSchema, "The new head.", [
    400,
    404,
    { status: 409, description: "Same chunk changed concurrently.", schema: schemas.ChunkConflictSchema },
    503,
  ]),
  async handle({ params, body }, call) {
    const edit = { ...slotEdit(params, body), html: body.html };
    const saved = await call.ctx.workspace.saveToSlot(edit, call.rpc(DOCUMENT_WRITE_TIMEOUT_MS));
    return {
      body: {
        session_id: params.session_id,
        document_id: required(saved.entry, "entry").documentId,
        durable_document_id: saved.durableDocumentId,
        version_id: saved.versionId,
        changed_chunk_ids: saved.changedChunkIds,
        merged: saved.merged,
        html: saved.html,
        created: saved.created,
      },
    };
  },
});

/**
 * POST .../documents/{document_id}/unarchive (session form): restores the document, re-links it
 * to the session (focused) and, with a body, saves the supplied edits on top. Idempotent; an
 * unknown id is a no-op success.
 */
export const sessionUnarchiveRoute = defineRoute({
  ...endpoint(
    "POST /v1/sessions/{session_id}/documents/{document_id}/unarchive",
    "unarchiveSessionDocument",
    "Restore within a session",
    "sessions",
  ),
  description: "Non-billable and idempotent.",
  request: { params: schemas.SessionDocumentPathSchema, body: schemas.UnarchiveBodySchema },
  ...answers(schemas.RosterResponseSchema, "The roster with the re-linked document.", [404, 409, 503]),
  async handle({ params, body }, call) {
    const res = await call.ctx.workspace.unarchiveInSession(
      slotEdit(params, body),
      call.rpc(DOCUMENT_WRITE_TIMEOUT_MS),
    );
    const current = required(res.session, "session");
    if (!res.found) {
      // Unknown (or another owner's) id: nothing to restore, nothing revealed.
      return { body: { ...(await rosterResponse(call, current, { includeHtml: false })), unarchived: false } };
    }
    const out = await rosterResponse(call, current, { includeHtml: false, focusedHtml: true });
    return {
      body: {
        ...out,
        document: out.documents.find((d) => d.durable_document_id === res.durableDocumentId),
        unarchived: res.unarchived,
      },
    };
  },
});

/** The roster answer of focus and close: `html` and the focused entry's `html` hold the focused document. */
function focusedRoster(call: RouteCall, s: sessionsV1.Session | undefined, includeHtml: boolean) {
  return rosterResponse(call, session(s), { includeHtml, focusedHtml: true });
}

/** POST .../documents/{document_id}/focus: focuses it and returns its HTML. */
export const focusDocumentRoute = defineRoute({
  ...endpoint(
    "POST /v1/sessions/{session_id}/documents/{document_id}/focus",
    "focusSessionDocument",
    "Focus a document",
    "sessions",
  ),
  request: { params: schemas.SessionDocumentPathSchema, query: IncludeHtmlQuerySchema },
  ...answers(
    schemas.RosterResponseSchema,
    "The roster; `html` and `document.html` hold the focused document.",
    [404, 503],
  ),
  async handle({ params, query }, call) {
    const res = await call.ctx.workspace.focusDocument(slotRef(params), call.rpc());
    const out = await focusedRoster(call, res.session, query.include_html);
    return { body: { ...out, document: out.documents.find((d) => d.focused) } };
  },
});

/** DELETE .../documents/{document_id}: closes it in the session (persisted); `next_focus` picks the next focus. */
export const closeDocumentRoute = defineRoute({
  ...endpoint(
    "DELETE /v1/sessions/{session_id}/documents/{document_id}",
    "closeSessionDocument",
    "Close a document in a session",
    "sessions",
  ),
  request: { params: schemas.SessionDocumentPathSchema, query: schemas.CloseQuerySchema },
  ...answers(
    schemas.RosterResponseSchema,
    "The remaining roster and the focused document's HTML (left out when empty).",
    [404, 503],
  ),
  async handle({ params, query }, call) {
    const closing = { ...slotRef(params), nextFocus: query.next_focus ?? "" };
    const res = await call.ctx.workspace.closeDocument(closing, call.rpc());
    const out = await focusedRoster(call, res.session, query.include_html);
    return { body: { ...out, closed_document_id: res.closed?.documentId ?? params.document_id } };
  },
});

/**
 * POST /v1/sessions/{session_id}/chunks/{chunk_id}/re-edit `{mode, document_id?, instruction?}`:
 * resolves a concurrent edit of one chunk (one billable operation) → `{chunk_id, html, version_id}`.
 */
export const reEditChunkRoute = defineRoute({
  ...endpoint(
    "POST /v1/sessions/{session_id}/chunks/{chunk_id}/re-edit",
    "reEditChunk",
    "Resolve a concurrent edit on one section",
    "sessions",
    EXPENSIVE_IDEMPOTENT,
  ),
  description: "One billable operation. redo re-applies the AI's change on the user's current text; merge blends both.",
  request: { params: schemas.ChunkPathSchema, body: schemas.ReEditChunkSchema },
  ...withUsageHeaders(answers(schemas.ReEditChunkResponseSchema, "The rewritten section HTML.", [404, 429, 503, 504])),
  async handle({ params, body }, call) {
    const res = await call.ctx.agent.reEditChunk(
      {
        sessionId: params.session_id,
        chunkId: params.chunk_id,
        mode: body.mode,
        documentId: body.document_id ?? "",
        instruction: body.instruction ?? "",
      },
      call.rpc(call.ctx.cfg.aiTimeoutMs),
    );
    const usage = usageToJson(res.usage, call.principal?.plan ?? "");
    // A billable endpoint: the X-Usage-* headers come with every answer, as chat's do.
    return {
      body: { chunk_id: res.chunkId, html: res.html, version_id: res.versionId, usage },
      headers: usageHeaders(usage),
    };
  },
});

/** POST /v1/sessions/{session_id}/editor-actions: records font, colour and alignment changes (shown in history). */
export const recordEditorActionsRoute = defineRoute({
  ...endpoint(
    "POST /v1/sessions/{session_id}/editor-actions",
    "recordEditorActions",
    "Record editor actions",
    "sessions",
  ),
  description: "Font, colour and alignment changes made in the editor; history returns them as editor_actions.",
  request: { params: SessionPathSchema, body: schemas.RecordEditorActionsSchema },
  ...answers(schemas.EditorActionsResponseSchema, "The stored actions.", [404, 503]),
  async handle({ params, body }, call) {
    await getSession(call, params.session_id);
    const actions = await recordEditorActions(call, params.session_id, body.actions);
    return { body: { session_id: params.session_id, actions: actions.map(editorActionJson) } };
  },
});

/** The roster routes, in documentation order (api/index.ts mounts every area's list). */
export const rosterRoutes: Route[] = [
  openDocumentsRoute,
  initSessionRoute,
  saveDocumentRoute,
  sessionUnarchiveRoute,
  blankDocumentRoute,
  listSessionDocumentsRoute,
  focusDocumentRoute,
  closeDocumentRoute,
  reEditChunkRoute,
  recordEditorActionsRoute,
];
