import type { sessionsWorkspaceV1 } from "@redline/grpc-stubs";
import { ownerOf } from "@redline/service-kit";
import { listDocumentHolders as holders } from "../commands/roster.js";
import { documentHolder } from "../mappers.js";
import type { Rpc } from "./types.js";

/** ListDocumentHolders: sessions holding documents open (session_count, prior chats). */
export const listDocumentHolders: Rpc<
  sessionsWorkspaceV1.ListDocumentHoldersRequest,
  sessionsWorkspaceV1.ListDocumentHoldersResponse
> = async (ctx, req, call) => {
  const input = { documentIds: req.durableDocumentIds, excludeSessionId: req.excludeSessionId };
  return { holders: (await holders(ctx.db, ownerOf(call), input)).map(documentHolder) };
};
