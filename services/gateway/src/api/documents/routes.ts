// The library routes under /v1/documents/{document_id} and GET /v1/sessions/{session_id}/doc-events.
import { InputError, required } from "@redline/service-kit";
import { z } from "zod";
import { defineRoute, type Route } from "../../route-registry.js";
import { changeRecordToJson, chunksToHtml, pageSetupFromJson, pageSetupToJson } from "../shared/mappers.js";
import { answers, endpoint } from "../shared/routes.js";
import { SessionPathSchema } from "../shared/schemas.js";
import { documentSummaryJson, refuseWhileJobRunning, sessionCounts, versionJson } from "./mappers.js";
import * as schemas from "./schemas.js";

/**
 * GET /v1/documents: the caller's documents, most recently updated first, metadata only, with
 * session_count. Chats store every document they load as a durable document, so earlier chats'
 * documents are listed from the first call (`imported` is always 0).
 */
export const listDocumentsRoute = defineRoute({
  ...endpoint("GET /v1/documents", "listDocuments", "List saved documents", "documents"),
  request: { query: schemas.ListDocumentsQuerySchema },
  ...answers(schemas.DocumentListResponseSchema, "Files entries, most recently updated first.", [503]),
  async handle({ query }, call) {
    const res = await call.ctx.library.listDocuments(
      { limit: query.limit, offset: query.offset, archived: query.archived, includePreview: query.include_preview },
      call.rpc(),
    );
    const counts = await sessionCounts(
      call,
      res.documents.map((d) => d.document?.documentId ?? ""),
    );
    const documents = res.documents.flatMap((d) =>
      d.document
        ? [
            {
              ...documentSummaryJson(d.document, counts.get(d.document.documentId) ?? 0),
              ...(query.include_preview && { preview_html: d.previewHtml }),
            },
          ]
        : [],
    );
    return { body: { documents, total: res.total, limit: query.limit, offset: query.offset, imported: 0 } };
  },
});

/** GET /v1/documents/{document_id}: metadata, structure and prior chats; 404 when not the caller's. */
export const documentDetailRoute = defineRoute({
  ...endpoint("GET /v1/documents/{document_id}", "getDocument", "Document detail", "documents"),
  description: "Non-billable. include_html=true adds html, page_setup and version_id.",
  request: { params: schemas.DocumentPathSchema, query: schemas.IncludeHtmlQuerySchema },
  ...answers(schemas.DocumentDetailSchema, "Metadata, structure and the chats that have it open.", [404, 503]),
  async handle({ params, query }, call) {
    const res = await call.ctx.library.describeDocument({ documentId: params.document_id }, call.rpc());
    const meta = required(res.document, "document");
    const { holders } = await call.ctx.workspace.listDocumentHolders(
      { durableDocumentIds: [meta.documentId], excludeSessionId: "" },
      call.rpc(),
    );
    const s = res.structure;
    // The spec lists version_id with html and page_setup: "Only when include_html=true".
    const { version_id, ...summary } = documentSummaryJson(meta, holders.length);
    return {
      body: {
        ...summary,
        structure: {
          headings: (s?.headings ?? []).map((h) => ({
            level: h.level,
            text: h.text,
            position: h.position,
            chunk_id: h.chunkId,
          })),
          section_count: s?.sectionCount ?? 0,
          block_count: s?.blockCount ?? 0,
          media: { images: s?.images ?? 0, diagrams: s?.diagrams ?? 0 },
        },
        prior_chats: holders.map((h) => ({
          session_id: h.sessionId,
          title: h.sessionTitle,
          document_id: h.slotId,
          last_updated: h.updatedAt?.toISOString(),
        })),
        ...(query.include_html && {
          html: chunksToHtml(res.chunks),
          page_setup: pageSetupToJson(meta.pageSetup),
          version_id,
        }),
      },
    };
  },
});

/**
 * PATCH /v1/documents/{document_id} `{title?, page_setup?}`: a title-only call answers
 * `status: "renamed"`. A legacy `parts` payload → 400 `parts_moved_to_chunks`: out-of-flow parts
 * (headers, footers, notes, comments, per-section geometry) are chunks, edited through chat or save.
 */
export const updateDocumentRoute = defineRoute({
  ...endpoint("PATCH /v1/documents/{document_id}", "updateDocument", "Rename and/or update page setup", "documents"),
  request: { params: schemas.DocumentPathSchema, body: schemas.UpdateDocumentSchema },
  ...answers(schemas.UpdateDocumentResponseSchema, "The document after the update.", [400, 404, 503]),
  async handle({ params, body }, call) {
    if ("parts" in body) {
      throw new InputError(
        "Document parts are chunks of the document now: edit headers, footers, notes and comments through chat or save",
        { code: "parts_moved_to_chunks" },
      );
    }
    if (body.title === undefined && body.page_setup === undefined)
      throw new InputError("Nothing to update: send title and/or page_setup");
    const res = await call.ctx.library.updateDocument(
      {
        documentId: params.document_id,
        title: body.title,
        ...(body.page_setup && { pageSetup: pageSetupFromJson(body.page_setup) }),
        clearPageSetup: body.page_setup === null,
        sessionId: "",
      },
      call.rpc(),
    );
    const meta = required(res.document, "document");
    const counts = await sessionCounts(call, [meta.documentId]);
    return {
      body: {
        status: body.page_setup === undefined ? ("renamed" as const) : ("updated" as const),
        document: documentSummaryJson(meta, counts.get(meta.documentId) ?? 0),
      },
    };
  },
});

/**
 * DELETE /v1/documents/{document_id}?force&from_session: archives. Open in another session and
 * no force → 409 document_in_use, nothing archived. Archiving unlinks the document from every
 * session (they see a document_updated event with change "archived"). A 2xx means it happened.
 */
export const archiveDocumentRoute = defineRoute({
  ...endpoint("DELETE /v1/documents/{document_id}", "archiveDocument", "Archive", "documents"),
  request: { params: schemas.DocumentPathSchema, query: schemas.ArchiveQuerySchema },
  ...answers(schemas.ArchiveResponseSchema, "The document is archived.", [
    404,
    {
      status: 409,
      description: "Open in another session (document_in_use), or already archived (already_archived).",
      schema: z.union([schemas.DocumentInUseSchema, schemas.AlreadyArchivedSchema]),
    },
    503,
  ]),
  async handle({ params, query }, call) {
    // The sessions service owns the workflow: 404, the 409 document_in_use rule, archive, unlink.
    const res = await call.ctx.workspace.archiveDocument(
      { durableDocumentId: params.document_id, fromSession: query.from_session ?? "", force: query.force },
      call.rpc(),
    );
    return {
      body: {
        document_id: res.durableDocumentId,
        status: "archived" as const,
        archived: true as const,
        already_archived: res.alreadyArchived,
        unlinked_sessions: res.unlinkedSessions,
      },
    };
  },
});

/** POST /v1/documents/{document_id}/unarchive: restores; a no-op success for active or unknown ids. */
export const unarchiveDocumentRoute = defineRoute({
  ...endpoint("POST /v1/documents/{document_id}/unarchive", "unarchiveDocument", "Restore", "documents"),
  description: "Non-billable and idempotent.",
  request: { params: schemas.DocumentPathSchema },
  ...answers(schemas.UnarchiveResponseSchema, "The document is active (or was unknown: nothing happened).", [503]),
  async handle({ params }, call) {
    const res = await call.ctx.library.unarchiveDocument({ documentId: params.document_id, sessionId: "" }, call.rpc());
    return { body: { document_id: params.document_id, status: "active" as const, unarchived: res.unarchived } };
  },
});

/**
 * `document_updated` events with an id above `after_id`, ascending; `last_id` is the next
 * cursor. Ids are outbox ids, committed in id order, so polling never skips or repeats one.
 */
export const docEventsRoute = defineRoute({
  ...endpoint(
    "GET /v1/sessions/{session_id}/doc-events",
    "pollDocumentEvents",
    "Poll cross-session updates",
    "sessions",
  ),
  request: { params: SessionPathSchema, query: schemas.DocEventsQuerySchema },
  ...answers(schemas.DocEventsResponseSchema, "Events after the cursor.", [404, 503]),
  async handle({ params, query }, call) {
    // Two calls per poll: the session's documents (404 for a foreign session), then the outbox.
    const watched = await call.ctx.workspace.listWatchedDocuments({ sessionId: params.session_id }, call.rpc());
    const slotOf = new Map(watched.documents.map((d) => [d.durableDocumentId, d.slotId]));
    const res =
      watched.documents.length === 0
        ? { events: [], hasMore: false }
        : await call.ctx.library.listDocumentEvents(
            {
              documentIds: [...slotOf.keys()],
              afterId: query.after_id,
              excludeSessionId: query.include_own ? "" : params.session_id,
              limit: query.limit,
              types: ["document_updated"],
            },
            call.rpc(),
          );
    const events = res.events.map((e) => {
      const payload = e.payload;
      const chunkIds = payload?.chunkIds?.ids;
      return {
        id: e.id,
        type: "document_updated" as const,
        document_id: e.documentId,
        slot_document_id: slotOf.get(e.documentId) || undefined,
        version_id: e.versionId,
        session_id: e.sessionId || undefined,
        change: payload?.kind ?? "edit",
        ...(chunkIds && { chunk_ids: chunkIds }),
        ...(payload?.title !== undefined && { title: payload.title }),
        created_at: e.createdAt?.toISOString(),
      };
    });
    return {
      body: {
        session_id: params.session_id,
        events,
        last_id: events.at(-1)?.id ?? query.after_id,
        has_more: res.hasMore,
      },
    };
  },
});

/**
 * GET /v1/documents/{document_id}/versions?limit&offset: the version history, newest first
 * (documents.ListVersions); 404 when the document is not the caller's. Non-billable.
 */
export const listVersionsRoute = defineRoute({
  ...endpoint("GET /v1/documents/{document_id}/versions", "listDocumentVersions", "Version history", "documents"),
  request: { params: schemas.DocumentPathSchema, query: schemas.ListVersionsQuerySchema },
  ...answers(schemas.VersionListResponseSchema, "Versions, newest first.", [404, 503]),
  async handle({ params, query }, call) {
    const res = await call.ctx.library.listVersions({ documentId: params.document_id, ...query }, call.rpc());
    return { body: { versions: res.versions.map(versionJson), total: res.total } };
  },
});

/**
 * GET /v1/documents/{document_id}/versions/{version_id}?include_html: one version's metadata,
 * and its HTML with include_html=true (documents.GetVersion); 404 for another owner's document
 * or a version of another document. Non-billable.
 */
export const getVersionRoute = defineRoute({
  ...endpoint(
    "GET /v1/documents/{document_id}/versions/{version_id}",
    "getDocumentVersion",
    "One version",
    "documents",
  ),
  request: { params: schemas.VersionPathSchema, query: schemas.IncludeHtmlQuerySchema },
  ...answers(schemas.VersionDetailSchema, "The version (and its HTML on request).", [404, 503]),
  async handle({ params, query }, call) {
    const { document_id: documentId, version_id: versionId } = params;
    const res = await call.ctx.library.getVersion(
      { documentId, versionId, includeHtml: query.include_html },
      call.rpc(),
    );
    return {
      body: { ...versionJson(required(res.version, "version")), ...(query.include_html && { html: res.html }) },
    };
  },
});

/**
 * POST /v1/documents/{document_id}/versions/{version_id}/restore: writes a NEW version equal to
 * that one (documents.RestoreVersion; title and page setup stay as at head), non-billable, with
 * a `document_updated` doc-event (change "restore") for every session holding the document.
 * Refused with 409 job_running, nothing written, while a job runs or awaits approval on a session
 * holding it: the job's commit would land on top of the restore, or be merged under it. Restoring
 * head (or a version equal to it) answers 200 `restored: false` and writes nothing. 404 for
 * another owner's document or a version of another document; 409 document_archived.
 */
export const restoreVersionRoute = defineRoute({
  ...endpoint(
    "POST /v1/documents/{document_id}/versions/{version_id}/restore",
    "restoreDocumentVersion",
    "Restore a version",
    "documents",
  ),
  description: "Non-billable. A no-op (restored: false) when head already has that version's content.",
  request: { params: schemas.VersionPathSchema },
  ...answers(schemas.RestoreVersionResponseSchema, "The new version (or head when nothing was written).", [
    404,
    {
      status: 409,
      description: "A job runs on a session holding the document (job_running), or it is archived (document_archived).",
      schema: z.union([schemas.JobRunningSchema, schemas.DocumentArchivedSchema]),
    },
    503,
  ]),
  async handle({ params }, call) {
    const { document_id: documentId, version_id: versionId } = params;
    await refuseWhileJobRunning(call, documentId);
    const res = await call.ctx.library.restoreVersion({ documentId, versionId, sessionId: "" }, call.rpc());
    return {
      body: {
        ...versionJson(required(res.version, "version")),
        restored: res.restored,
        restored_from: versionId,
      },
    };
  },
});

/**
 * GET /v1/documents/{document_id}/versions/{version_id}/diff?against: the change records from
 * `against` (default: the predecessor) to the version, chunk by chunk (documents.DiffVersions).
 * 404 for another owner's document or an unknown version; 422 for a malformed `against`.
 */
export const diffVersionsRoute = defineRoute({
  ...endpoint(
    "GET /v1/documents/{document_id}/versions/{version_id}/diff",
    "diffDocumentVersions",
    "Compare two versions",
    "documents",
  ),
  description: "Non-billable.",
  request: { params: schemas.VersionPathSchema, query: schemas.DiffVersionsQuerySchema },
  ...answers(schemas.VersionDiffSchema, "The change records between the two versions.", [404, 503]),
  async handle({ params, query }, call) {
    const { document_id: documentId, version_id: versionId } = params;
    const res = await call.ctx.library.diffVersions(
      { documentId, versionId, againstVersionId: query.against ?? "" },
      call.rpc(),
    );
    return {
      body: {
        document_id: documentId,
        version_id: required(res.version, "version").versionId,
        ...(res.against && { against_version_id: res.against.versionId }),
        changes: res.changes.map(changeRecordToJson),
      },
    };
  },
});

/** The documents routes, in documentation order (api/index.ts mounts every area's list). */
export const documentsRoutes: Route[] = [
  listDocumentsRoute,
  documentDetailRoute,
  listVersionsRoute,
  getVersionRoute,
  restoreVersionRoute,
  diffVersionsRoute,
  updateDocumentRoute,
  archiveDocumentRoute,
  unarchiveDocumentRoute,
  docEventsRoute,
];
