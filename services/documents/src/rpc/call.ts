// The shape of an RPC file of the documents service, and what every RPC needs from its call:
// the owner the gateway vouched for.
import type { documentsLibraryV1, documentsV1 } from "@redline/grpc-stubs";
import { type CallContext, type Rpc, requirePrincipal } from "@redline/service-kit";
import type { DocumentsContext } from "../context.js";

/** The caller's owner id (user or organization); UnauthenticatedError when the call has no principal. */
export function ownerOf(call: CallContext): string {
  return requirePrincipal(call).ownerId;
}

type DocumentsDef = typeof documentsV1.DocumentsServiceService;
/** One RPC of documents.v1.DocumentsService, in `rpc/<verb-noun>.ts` (bound by file name). */
export type DocumentsRpc<K extends keyof DocumentsDef> = Rpc<DocumentsContext, DocumentsDef, K>;

type LibraryDef = typeof documentsLibraryV1.DocumentLibraryServiceService;
/** One RPC of documents.v1.DocumentLibraryService, in `rpc/<verb-noun>.ts` (bound by file name). */
export type LibraryRpc<K extends keyof LibraryDef> = Rpc<DocumentsContext, LibraryDef, K>;
