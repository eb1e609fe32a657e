import { ownerOf, traceparentOf } from "@redline/service-kit";
import * as commit from "../commands/commit.js";
import { commitResponse, versionAuthor } from "../mappers.js";
import type { DocumentsRpc } from "./call.js";
import { toOperations } from "./operations.js";

/**
 * CommitOperations: a chat turn's chunk operations as one version on head, merged three-way
 * against other sessions' commits since `base_version_id` (ARCHITECTURE "Documents, versions
 * and events"). InputError (400) for an invalid operation; ConflictError (409 `chunk_conflict`
 * unless `record_conflicts`, `document_archived`); NotFoundError (404) for a foreign document.
 */
export const commitOperations: DocumentsRpc<"commitOperations"> = async (ctx, req, call) => {
  const input = { ...req, operations: toOperations(req.operations), recordConflicts: req.recordConflicts ?? false };
  const result = await commit.commitOperations(ctx.db, ownerOf(call), {
    ...input,
    writer: "chat",
    author: versionAuthor(call, req.authorKind),
    traceparent: traceparentOf(call.trace),
  });
  if (result.committed) ctx.relay.kick();
  return commitResponse(result);
};
