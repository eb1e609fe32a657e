import { ownerOf, traceparentOf } from "@redline/service-kit";
import * as turn from "../commands/turn.js";
import { pageSetupFromProto, turnResponse, versionAuthor } from "../mappers.js";
import type { DocumentsRpc } from "./call.js";
import { toOperations } from "./operations.js";

/**
 * CommitTurn: a chat turn's writes in one transaction (ARCHITECTURE "One chat turn"): the
 * loaded chunks, checked here, as a new document or a replace by the calling user, then the
 * turn's operations as one version by the AI, merged three-way with clashes recorded as
 * conflicts; answers the head before the writes (the turn's checkpoint). InputError (400
 * `invalid_chunk`, `invalid_operation`); NotFoundError (404); ConflictError `document_archived`.
 */
export const commitTurn: DocumentsRpc<"commitTurn"> = async (ctx, req, call) => {
  const load = req.load && {
    ...req.load,
    pageSetup: pageSetupFromProto(req.load.pageSetup),
  };
  const result = await turn.commitTurn(ctx.db, ownerOf(call), {
    ...req,
    load,
    operations: toOperations(req.operations),
    author: versionAuthor(call, undefined),
    traceparent: traceparentOf(call.trace),
  });
  if (result.wrote) ctx.relay.kick();
  return turnResponse(result);
};
