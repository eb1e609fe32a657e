// ListFormats: the upload extensions ingest accepts.
import type { ingestV1 } from "@redline/grpc-stubs";
import { SUPPORTED_EXTENSIONS } from "../formats.js";

/** Handler of IngestService.ListFormats: SUPPORTED_EXTENSIONS with their dots (interface-spec fact 8). */
export async function listFormats(): Promise<ingestV1.ListFormatsResponse> {
  return { extensions: [...SUPPORTED_EXTENSIONS] };
}
