// Upload answers: page setup and the roster after a load.
import type { commonV1, sessionsV1 } from "@redline/grpc-stubs";
import { pageSetupToJson } from "../shared/mappers.js";
import type { UploadDocumentResponseJson } from "./schemas.js";

/**
 * The upload reply's page_setup (null when none). The reader's page setups always set size,
 * orientation and margins; a replaced document keeps its stored one, which the OpenAPI shape
 * describes as the reader's, as it did when this was parsed JSON.
 */
export function pageSetup(p: commonV1.PageSetup | undefined): UploadDocumentResponseJson["page_setup"] {
  return pageSetupToJson(p) as UploadDocumentResponseJson["page_setup"];
}

/** The session roster after an upload, as the reply's `roster`. */
export function rosterToJson(roster: sessionsV1.RosterEntry[]): NonNullable<UploadDocumentResponseJson["roster"]> {
  return roster.map((e) => ({
    document_id: e.documentId,
    durable_document_id: e.durableDocumentId || null,
    title: e.title,
    focused: e.focused,
    version_id: e.lastSeenVersionId || undefined,
  }));
}
