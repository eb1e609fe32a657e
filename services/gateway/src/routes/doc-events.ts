// GET /v1/sessions/{session_id}/doc-events (interface-spec endpoint 15): the documents outbox read
// as a poll feed, filtered to the documents this session holds (and those an archive unlinked
// from it), leaving out the session's own writes unless include_own=true.
import { defineRoute } from "../route-registry.js";
import { SessionPathSchema } from "../schemas.js";
import { DocEventsQuerySchema, DocEventsResponseSchema } from "../schemas-documents.js";

function payloadOf(json: string): Record<string, unknown> {
  try {
    const value: unknown = JSON.parse(json);
    return value !== null && typeof value === "object" ? (value as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

/**
 * `document_updated` events with an id above `after_id`, ascending; `last_id` is the next
 * cursor. Ids are outbox ids, committed in id order, so polling never skips or repeats one.
 */
export const docEventsRoute = defineRoute({
  method: "get",
  path: "/v1/sessions/{session_id}/doc-events",
  operationId: "pollDocumentEvents",
  summary: "Poll cross-session updates",
  tags: ["sessions"],
  auth: true,
  params: SessionPathSchema,
  query: DocEventsQuerySchema,
  response: { description: "Events after the cursor.", schema: DocEventsResponseSchema },
  errors: [404, 503],
  async handle({ params, query }, call) {
    // Two calls per poll: the session's documents (404 for a foreign session), then the outbox.
    const watched = await call.ctx.workspace.listWatchedDocuments({ sessionId: params.session_id }, call.rpc());
    const slotOf = new Map(watched.documents.map((d) => [d.durableDocumentId, d.slotId]));
    const res =
      watched.documents.length === 0
        ? { events: [], hasMore: false }
        : await call.ctx.library.listDocumentEvents(
            {
              documentIds: [...slotOf.keys()],
              afterId: query.after_id,
              excludeSessionId: query.include_own ? "" : params.session_id,
              limit: query.limit,
              types: ["document_updated"],
            },
            call.rpc(),
          );
    const events = res.events.map((e) => {
      const payload = payloadOf(e.payloadJson);
      const chunkIds = Array.isArray(payload.chunk_ids) ? payload.chunk_ids.map(String) : undefined;
      return {
        id: e.id,
        type: "document_updated" as const,
        document_id: e.documentId,
        slot_document_id: slotOf.get(e.documentId) || null,
        version_id: e.versionId,
        session_id: e.sessionId || null,
        change: typeof payload.kind === "string" ? payload.kind : "edit",
        ...(chunkIds && { chunk_ids: chunkIds }),
        ...(typeof payload.title === "string" && { title: payload.title }),
        created_at: e.createdAt?.toISOString() ?? null,
      };
    });
    return {
      body: {
        session_id: params.session_id,
        events,
        last_id: events.at(-1)?.id ?? query.after_id,
        has_more: res.hasMore,
      },
    };
  },
});
