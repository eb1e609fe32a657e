import { ownerOf } from "@redline/service-kit";
import * as library from "../commands/library.js";
import { documentEvent } from "../mappers.js";
import type { LibraryRpc } from "./call.js";

/** ListDocumentEvents (endpoint 15): the outbox as a poll feed, ids above `after_id` ascending, `has_more` when the page was full. */
export const listDocumentEvents: LibraryRpc<"listDocumentEvents"> = async (ctx, req, call) => {
  const { events, hasMore } = await library.listDocumentEvents(ctx.db, ownerOf(call), req);
  return { events: events.map(documentEvent), hasMore };
};
