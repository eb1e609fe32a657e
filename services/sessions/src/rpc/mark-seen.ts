import type { sessionsWorkspaceV1 } from "@redline/grpc-stubs";
import { ownerOf } from "@redline/service-kit";
import { markSeen as seen } from "../commands/roster.js";
import { rosterEntry } from "../mappers.js";
import type { Rpc } from "./types.js";

/** MarkSeen: records the version a slot saw or wrote (changed_since_seen). */
export const markSeen: Rpc<sessionsWorkspaceV1.MarkSeenRequest, sessionsWorkspaceV1.MarkSeenResponse> = async (
  ctx,
  req,
  call,
) => {
  return { entry: rosterEntry(await seen(ctx.db, ownerOf(call), req)) };
};
