import type { sessionsWorkspaceV1 } from "@redline/grpc-stubs";
import { ownerOf } from "@redline/service-kit";
import { storeAndAttach as store } from "../commands/workflows.js";
import { rosterEntry } from "../mappers.js";
import { downstream, type Rpc } from "./types.js";

/** StoreAndAttach (uploads): stores converted content (new, or replacing the focused document) and opens it. */
export const storeAndAttach: Rpc<
  sessionsWorkspaceV1.StoreAndAttachRequest,
  sessionsWorkspaceV1.StoreAndAttachResponse
> = async (ctx, req, call) => {
  const { sessionId, slotId, meta, html, roster } = await store(ctx, ownerOf(call), downstream(call), req);
  const { documentId: durableDocumentId, versionId, chunkCount, title } = meta;
  const pageSetup = meta.pageSetup ?? req.pageSetup;
  return {
    sessionId,
    slotId,
    durableDocumentId,
    versionId,
    chunkCount,
    title,
    pageSetup,
    html: req.returnHtml ? html : "",
    roster: roster.map(rosterEntry),
  };
};
