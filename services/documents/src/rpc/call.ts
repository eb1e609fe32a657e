// The shape of an RPC file of the documents service, and what every RPC needs from its call:
// the owner the gateway vouched for.
import type { documentsLibraryV1, documentsV1 } from "@redline/grpc-stubs";
import { type bindService, type CallContext, type RpcHandlers, requirePrincipal } from "@redline/service-kit";
import type { DocumentsContext } from "../context.js";

/** The caller's owner id (user or organization); UnauthenticatedError when the call has no principal. */
export function ownerOf(call: CallContext): string {
  return requirePrincipal(call).ownerId;
}

/** RPC handlers of a service that take the context first; rpc/index.ts supplies it. */
export type ContextHandlers<D extends Parameters<typeof bindService>[0]> = {
  [K in keyof RpcHandlers<D>]: (
    ctx: DocumentsContext,
    ...args: Parameters<RpcHandlers<D>[K]>
  ) => ReturnType<RpcHandlers<D>[K]>;
};

/** One RPC of documents.v1.DocumentsService. */
export type DocumentsRpc<K extends keyof ContextHandlers<typeof documentsV1.DocumentsServiceService>> = ContextHandlers<
  typeof documentsV1.DocumentsServiceService
>[K];

/** One RPC of documents.v1.DocumentLibraryService. */
export type LibraryRpc<K extends keyof ContextHandlers<typeof documentsLibraryV1.DocumentLibraryServiceService>> =
  ContextHandlers<typeof documentsLibraryV1.DocumentLibraryServiceService>[K];
