import type { sessionsV1 } from "@redline/grpc-stubs";
import { ownerOf } from "@redline/service-kit";
import { attachDocument as attach } from "../commands/roster.js";
import { rosterEntry } from "../mappers.js";
import type { Rpc } from "./types.js";

/** AttachDocument: puts a durable document in a session's roster (AttachDocument rules in commands/roster.ts). */
export const attachDocument: Rpc<sessionsV1.AttachDocumentRequest, sessionsV1.AttachDocumentResponse> = async (
  ctx,
  req,
  call,
) => {
  const { slotId, ...rest } = req;
  return { entry: rosterEntry(await attach(ctx.db, ownerOf(call), { ...rest, slotId: slotId || undefined })) };
};
