// Every API route of the gateway, in documentation order. Adding a route here mounts it and
// adds its OpenAPI entry; each feature area keeps its routes, schemas and mappers in api/<area>/.
import type { Route } from "../route-registry.js";
import {
  attachmentStatusRoute,
  deleteAttachmentRoute,
  uploadAttachmentBase64Route,
  uploadAttachmentRoute,
} from "./attachments/routes.js";
import { chatAsyncRoute, chatRoute, redoRevertRoute, revertRoute } from "./chat/routes.js";
import {
  archiveDocumentRoute,
  docEventsRoute,
  documentDetailRoute,
  getVersionRoute,
  listDocumentsRoute,
  listVersionsRoute,
  unarchiveDocumentRoute,
  updateDocumentRoute,
} from "./documents/routes.js";
import { createDownloadRoute, emailExportRoute, exportDocumentRoute } from "./exports/routes.js";
import {
  approveRoute,
  cancelJobRoute,
  continueRoute,
  getJobRoute,
  listJobsRoute,
  sessionJobsRoute,
} from "./jobs/routes.js";
import { streamRoute } from "./jobs/stream.js";
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
} from "./roster/routes.js";
import { clearMemoryRoute, listSessionsRoute, sessionHistoryRoute } from "./sessions/routes.js";
import { healthRoute } from "./system/routes.js";
import { deleteTemplateRoute, listTemplatesRoute, uploadTemplateRoute } from "./templates/routes.js";
import {
  createUploadRoute,
  getMediaRoute,
  processUploadRoute,
  uploadDocumentBase64Route,
  uploadDocumentRoute,
} from "./uploads/routes.js";

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
    listVersionsRoute,
    getVersionRoute,
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
