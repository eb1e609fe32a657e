// The shape of an RPC file of the ingest service.
import type { ingestFilesV1, ingestV1 } from "@redline/grpc-stubs";
import type { Rpc } from "@redline/service-kit";
import type { IngestContext } from "../context.js";

type IngestDef = typeof ingestV1.IngestServiceService;
/** One RPC of ingest.v1.IngestService, in `rpc/<verb-noun>.ts` (bound by file name). */
export type IngestRpc<K extends keyof IngestDef> = Rpc<IngestContext, IngestDef, K>;

type FilesDef = typeof ingestFilesV1.FilesServiceService;
/** One RPC of ingest.v1.FilesService, in `rpc/<verb-noun>.ts` (bound by file name). */
export type FilesRpc<K extends keyof FilesDef> = Rpc<IngestContext, FilesDef, K>;
