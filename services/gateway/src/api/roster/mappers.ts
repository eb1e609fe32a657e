// Roster views: entries as JSON (with HTML and change flags on request), the roster response,
// editor actions, and resolving the ids a caller asks to open.
import type { documentsV1, sessionsV1, sessionsWorkspaceV1 } from "@redline/grpc-stubs";
import { ConflictError, isUuid, NotFoundError } from "@redline/service-kit";
import type { RouteCall } from "../../route-registry.js";
import { headHtml } from "../documents/mappers.js";
import { type PageSetupJson, pageSetupToJson } from "../shared/mappers.js";

/** A roster entry as JSON (see RosterEntrySchema). */
export interface RosterEntryJson {
  document_id: string;
  durable_document_id: string | null;
  title: string;
  chunk_count: number;
  section_count: number;
  focused: boolean;
  page_setup: PageSetupJson | null;
  version_id?: string;
  archived: boolean;
  html?: string;
  changed_since_seen?: boolean;
}

/**
 * A session's roster as JSON, focused first, with counts and page setup from the documents
 * service. `htmlFor` picks the entries that carry their HTML (each is then marked seen by the
 * session); `reportChanged` adds changed_since_seen.
 */
export async function rosterJson(
  call: RouteCall,
  session: sessionsV1.Session,
  opts: { htmlFor?: (entry: sessionsV1.RosterEntry) => boolean; reportChanged?: boolean },
): Promise<RosterEntryJson[]> {
  const ids = session.roster.map((r) => r.durableDocumentId).filter(Boolean);
  const metas = new Map<string, documentsV1.DocumentMeta>();
  if (ids.length > 0) {
    const res = await call.ctx.library.getDocumentsMeta({ documentIds: ids }, call.rpc());
    for (const m of res.documents) metas.set(m.documentId, m);
  }
  return Promise.all(
    session.roster.map(async (entry) => {
      const meta = metas.get(entry.durableDocumentId);
      const json: RosterEntryJson = {
        document_id: entry.documentId,
        durable_document_id: entry.durableDocumentId || null,
        title: meta?.title || entry.title,
        chunk_count: meta?.chunkCount ?? 0,
        section_count: meta?.sectionCount ?? 0,
        focused: entry.focused,
        page_setup: pageSetupToJson(meta?.pageSetup),
        version_id: meta?.versionId || undefined,
        archived: meta?.archived ?? false,
      };
      if (opts.reportChanged)
        json.changed_since_seen = meta !== undefined && meta.versionId !== entry.lastSeenVersionId;
      if (opts.htmlFor?.(entry)) {
        if (meta) {
          const { html, versionId } = await headHtml(call, meta.documentId);
          // The HTML and its version come from one snapshot; a commit since the metadata read wins.
          json.html = html;
          json.version_id = versionId;
          if (versionId !== entry.lastSeenVersionId) {
            await call.ctx.workspace.markSeen(
              { sessionId: session.sessionId, slotId: entry.documentId, versionId, title: "" },
              call.rpc(),
            );
          }
        } else json.html = "";
      }
      return json;
    }),
  );
}

/** The roster response body shared by the roster routes. */
export async function rosterResponse(
  call: RouteCall,
  session: sessionsV1.Session,
  opts: { includeHtml: boolean; reportChanged?: boolean; focusedHtml?: boolean },
) {
  const documents = await rosterJson(call, session, {
    htmlFor: (e) => opts.includeHtml || (opts.focusedHtml === true && e.focused),
    reportChanged: opts.reportChanged,
  });
  const focused = documents.find((d) => d.focused) ?? null;
  return {
    session_id: session.sessionId,
    documents,
    focused_document_id: focused?.document_id,
    ...(opts.focusedHtml && focused && { html: focused.html ?? "" }),
  };
}

/**
 * Resolves ids given to open (durable UUIDs, or slot ids of this session) to durable documents
 * of the caller: 404 for unknown or foreign ones, 409 document_archived for archived ones.
 */
export async function resolveDocumentsToOpen(
  call: RouteCall,
  session: sessionsV1.Session,
  refs: string[],
): Promise<documentsV1.DocumentMeta[]> {
  const durable = refs.map((ref) => {
    if (isUuid(ref)) return ref.toLowerCase();
    const slot = session.roster.find((r) => r.documentId === ref);
    if (!slot?.durableDocumentId) throw new NotFoundError(`Document ${ref} not found`);
    return slot.durableDocumentId;
  });
  const { documents } = await call.ctx.library.getDocumentsMeta({ documentIds: durable }, call.rpc());
  const byId = new Map(documents.map((d) => [d.documentId, d]));
  return durable.map((id) => {
    const meta = byId.get(id);
    if (!meta) throw new NotFoundError(`Document ${id} not found`);
    if (meta.archived) {
      throw new ConflictError(`Document ${id} is archived; unarchive it first`, {
        code: "document_archived",
        suggested_action: "unarchive",
      });
    }
    return meta;
  });
}

/** An editor action as JSON (history and the editor-actions route). */
export function editorActionJson(a: sessionsWorkspaceV1.EditorAction) {
  const details = a.details ?? null;
  return {
    id: a.id,
    action: a.action,
    value: a.value,
    document_id: a.documentId || undefined,
    chunk_ids: a.chunkIds,
    details,
    timestamp: a.createdAt?.toISOString(),
  };
}
