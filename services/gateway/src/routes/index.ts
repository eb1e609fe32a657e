// Every API route of the gateway, in documentation order. Adding a route here mounts it and
// adds its OpenAPI entry.
import type { Route } from "../route-registry.js";
import {
  attachmentStatusRoute,
  deleteAttachmentRoute,
  uploadAttachmentBase64Route,
  uploadAttachmentRoute,
} from "./attachments.js";
import { chatRoute } from "./chat.js";
import { approveRoute, chatAsyncRoute, continueRoute } from "./chat-async.js";
import { docEventsRoute } from "./doc-events.js";
import {
  archiveDocumentRoute,
  documentDetailRoute,
  listDocumentsRoute,
  unarchiveDocumentRoute,
  updateDocumentRoute,
} from "./documents.js";
import { createDownloadRoute, emailExportRoute, exportDocumentRoute } from "./exports.js";
import { healthRoute } from "./health.js";
import { cancelJobRoute, getJobRoute, listJobsRoute, sessionJobsRoute } from "./jobs.js";
import { clearMemoryRoute } from "./memory.js";
import { redoRevertRoute, revertRoute } from "./revert.js";
import {
  blankDocumentRoute,
  closeDocumentRoute,
  focusDocumentRoute,
  initSessionRoute,
  listSessionDocumentsRoute,
  openDocumentsRoute,
  recordEditorActionsRoute,
  reEditChunkRoute,
  saveDocumentRoute,
  sessionUnarchiveRoute,
} from "./session-documents.js";
import { listSessionsRoute, sessionHistoryRoute } from "./sessions.js";
import { streamRoute } from "./stream.js";
import { deleteTemplateRoute, listTemplatesRoute, uploadTemplateRoute } from "./templates.js";
import {
  createUploadRoute,
  getMediaRoute,
  processUploadRoute,
  uploadDocumentBase64Route,
  uploadDocumentRoute,
} from "./uploads.js";

/** The routes createApp mounts (besides /openapi.json, which documents them). */
export function apiRoutes(): Route[] {
  return [
    // Fixed /v1/documents/<verb> paths go before any /v1/documents/{document_id} route.
    uploadDocumentRoute,
    uploadDocumentBase64Route,
    exportDocumentRoute,
    emailExportRoute,
    createDownloadRoute,
    createUploadRoute,
    processUploadRoute,
    getMediaRoute,
    uploadAttachmentRoute,
    uploadAttachmentBase64Route,
    attachmentStatusRoute,
    deleteAttachmentRoute,
    uploadTemplateRoute,
    listTemplatesRoute,
    deleteTemplateRoute,
    chatRoute,
    chatAsyncRoute,
    approveRoute,
    continueRoute,
    streamRoute,
    getJobRoute,
    listJobsRoute,
    sessionJobsRoute,
    cancelJobRoute,
    revertRoute,
    redoRevertRoute,
    listSessionsRoute,
    sessionHistoryRoute,
    listDocumentsRoute,
    clearMemoryRoute,
    documentDetailRoute,
    updateDocumentRoute,
    archiveDocumentRoute,
    unarchiveDocumentRoute,
    openDocumentsRoute,
    initSessionRoute,
    saveDocumentRoute,
    sessionUnarchiveRoute,
    blankDocumentRoute,
    listSessionDocumentsRoute,
    docEventsRoute,
    focusDocumentRoute,
    closeDocumentRoute,
    reEditChunkRoute,
    recordEditorActionsRoute,
    healthRoute,
  ];
}
