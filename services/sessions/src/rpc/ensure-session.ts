import type { sessionsV1 } from "@redline/grpc-stubs";
import { ownerOf } from "@redline/service-kit";
import { ensureSession as ensure } from "../commands/sessions.js";
import { sessionMessage } from "../mappers.js";
import type { Rpc } from "./types.js";

/** EnsureSession: gets or creates the caller's session, minting an id when empty (interface-spec.md, Session). */
export const ensureSession: Rpc<sessionsV1.EnsureSessionRequest, sessionsV1.EnsureSessionResponse> = async (
  ctx,
  req,
  call,
) => {
  const { view, created } = await ensure(ctx.db, ownerOf(call), req.sessionId);
  return { session: sessionMessage(view), created };
};
