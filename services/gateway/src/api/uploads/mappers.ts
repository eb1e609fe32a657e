// Upload answers: page setup and the roster after a load.
import type { sessionsV1 } from "@redline/grpc-stubs";
import type { UploadDocumentResponseJson } from "./schemas.js";

/** A stored page-setup JSON string as the upload reply's page_setup; null when empty or malformed. */
export function pageSetup(json: string): UploadDocumentResponseJson["page_setup"] {
  if (!json) return null;
  try {
    return JSON.parse(json) as UploadDocumentResponseJson["page_setup"];
  } catch {
    return null;
  }
}

/** The session roster after an upload, as the reply's `roster`. */
export function rosterToJson(roster: sessionsV1.RosterEntry[]): NonNullable<UploadDocumentResponseJson["roster"]> {
  return roster.map((e) => ({
    document_id: e.documentId,
    durable_document_id: e.durableDocumentId || null,
    title: e.title,
    focused: e.focused,
    version_id: e.lastSeenVersionId || null,
  }));
}
