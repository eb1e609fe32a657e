// Upload answers: page setup, the roster after a load and the pre-signed upload's curl example.
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

/** `value` as one single-quoted POSIX shell word. */
function shellWord(value: string): string {
  return `'${value.replaceAll("'", "'\\''")}'`;
}

/**
 * The pre-signed upload's `curl_example`: a PUT of the local file `filename` to `uploadUrl`, both
 * quoted for a POSIX shell (the URL carries `&`, the name may carry anything); no Authorization
 * header, the URL is the credential. `--fail` makes a refused PUT (expired URL) exit non-zero.
 */
export function curlExample(filename: string, uploadUrl: string): string {
  return `curl --fail -X PUT --upload-file ${shellWord(`./${filename}`)} ${shellWord(uploadUrl)}`;
}
