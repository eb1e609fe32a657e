// Binds every RPC of documents.v1.DocumentsService and DocumentLibraryService to its file.
import { documentsLibraryV1, documentsV1 } from "@redline/grpc-stubs";
import { bindService, type CallContext, type RpcHandlers, type ServiceBinding } from "@redline/service-kit";
import type { DocumentsContext } from "../context.js";
import { archiveDocument } from "./archive-document.js";
import type { ContextHandlers } from "./call.js";
import { commitOperations } from "./commit-operations.js";
import { createDocument } from "./create-document.js";
import { describeDocument } from "./describe-document.js";
import { findConflicts } from "./find-conflicts.js";
import { getDocument } from "./get-document.js";
import { getDocumentsMeta } from "./get-documents-meta.js";
import { getVersion } from "./get-version.js";
import { listDocumentEvents } from "./list-document-events.js";
import { listDocuments } from "./list-documents.js";
import { listVersions } from "./list-versions.js";
import { replaceDocument } from "./replace-document.js";
import { resolveConflict } from "./resolve-conflict.js";
import { saveDocument } from "./save-document.js";
import { unarchiveDocument } from "./unarchive-document.js";
import { updateDocument } from "./update-document.js";

type Definition = Parameters<typeof bindService>[0];

/** Binds RPC files (context first) to a service definition, handing each call the one context. */
function bindWithContext<D extends Definition>(
  definition: D,
  ctx: DocumentsContext,
  handlers: ContextHandlers<D>,
): ServiceBinding {
  const bound = Object.fromEntries(
    Object.entries(
      handlers as unknown as Record<string, (c: DocumentsContext, req: never, call: CallContext) => unknown>,
    ).map(([name, fn]) => [name, (req: never, call: CallContext) => fn(ctx, req, call)]),
  );
  return bindService(definition, bound as RpcHandlers<D>);
}

/** documents.v1.DocumentsService: create, replace, read and commit (the agent's calls). */
export function documentsHandlers(ctx: DocumentsContext): ServiceBinding {
  return bindWithContext(documentsV1.DocumentsServiceService, ctx, {
    createDocument,
    replaceDocument,
    getDocument,
    commitOperations,
  });
}

/** documents.v1.DocumentLibraryService: the Files view, saves, events, conflicts and versions. */
export function libraryHandlers(ctx: DocumentsContext): ServiceBinding {
  return bindWithContext(documentsLibraryV1.DocumentLibraryServiceService, ctx, {
    listDocuments,
    getDocumentsMeta,
    describeDocument,
    updateDocument,
    archiveDocument,
    unarchiveDocument,
    saveDocument,
    listDocumentEvents,
    findConflicts,
    resolveConflict,
    listVersions,
    getVersion,
  });
}
