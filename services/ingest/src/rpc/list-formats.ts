import type { ingestV1 as pb } from "@redline/grpc-stubs";
import { SUPPORTED_EXTENSIONS } from "../formats.js";

/** IngestService.ListFormats (interface-spec fact 8): SUPPORTED_EXTENSIONS with their dots. */
export const listFormats = async (): Promise<pb.ListFormatsResponse> => ({ extensions: [...SUPPORTED_EXTENSIONS] });
