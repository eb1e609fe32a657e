import type { sessionsWorkspaceV1 } from "@redline/grpc-stubs";
import { ownerOf } from "@redline/service-kit";
import { openBlank as blank } from "../commands/roster.js";
import { rosterEntry, sessionMessage } from "../mappers.js";
import type { Rpc } from "./types.js";

/** OpenBlank (endpoint 13): a blank focused tab, saved to a durable document on its first save. */
export const openBlank: Rpc<sessionsWorkspaceV1.OpenBlankRequest, sessionsWorkspaceV1.OpenBlankResponse> = async (
  ctx,
  req,
  call,
) => {
  const { view, entry } = await blank(ctx.db, ownerOf(call), req);
  return { session: sessionMessage(view), entry: rosterEntry(entry) };
};
