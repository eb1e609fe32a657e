import type { ingestV1 as pb } from "@redline/grpc-stubs";
import { CONTENT_TYPE_BY_EXTENSION, SUPPORTED_EXTENSIONS } from "../formats.js";

/** IngestService.ListFormats (interface-spec fact 8): SUPPORTED_EXTENSIONS with their dots, and each one's MIME type. */
export const listFormats = async (): Promise<pb.ListFormatsResponse> => ({
  extensions: [...SUPPORTED_EXTENSIONS],
  contentTypes: { ...CONTENT_TYPE_BY_EXTENSION },
});
