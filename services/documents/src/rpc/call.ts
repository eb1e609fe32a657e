// The shape of an RPC file of the documents service (bound by file name).
import type { documentsLibraryV1, documentsV1 } from "@redline/grpc-stubs";
import type { Rpc } from "@redline/service-kit";
import type { DocumentsContext } from "../context.js";

type DocumentsDef = typeof documentsV1.DocumentsServiceService;
/** One RPC of documents.v1.DocumentsService, in `rpc/<verb-noun>.ts` (bound by file name). */
export type DocumentsRpc<K extends keyof DocumentsDef> = Rpc<DocumentsContext, DocumentsDef, K>;

type LibraryDef = typeof documentsLibraryV1.DocumentLibraryServiceService;
/** One RPC of documents.v1.DocumentLibraryService, in `rpc/<verb-noun>.ts` (bound by file name). */
export type LibraryRpc<K extends keyof LibraryDef> = Rpc<DocumentsContext, LibraryDef, K>;
