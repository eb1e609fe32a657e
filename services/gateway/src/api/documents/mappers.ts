// Library views: a document summary with its session count, a head version's HTML and a version,
// and the running-job guard of a version restore.
import type { documentsLibraryV1, documentsV1 } from "@redline/grpc-stubs";
import { ConflictError } from "@redline/service-kit";
import type { RouteCall } from "../../route-registry.js";
import { chunksToHtml, iso } from "../shared/mappers.js";

/** A Files entry (metadata only). */
export function documentSummaryJson(meta: documentsV1.DocumentMeta, sessionCount: number) {
  return {
    document_id: meta.documentId,
    durable_document_id: meta.documentId,
    title: meta.title,
    version_id: meta.versionId,
    chunk_count: meta.chunkCount,
    section_count: meta.sectionCount,
    archived: meta.archived,
    status: meta.archived ? ("archived" as const) : ("active" as const),
    created_at: iso(meta.createdAt),
    updated_at: iso(meta.updatedAt),
    session_count: sessionCount,
  };
}

/** Open-session counts per durable id (one sessions call for a page of documents). */
export async function sessionCounts(
  call: RouteCall,
  ids: string[],
  excludeSessionId = "",
): Promise<Map<string, number>> {
  const counts = new Map<string, number>();
  if (ids.length === 0) return counts;
  const { holders } = await call.ctx.workspace.listDocumentHolders(
    { durableDocumentIds: ids, excludeSessionId },
    call.rpc(),
  );
  for (const h of holders) counts.set(h.durableDocumentId, (counts.get(h.durableDocumentId) ?? 0) + 1);
  return counts;
}

/**
 * 409 job_running (with `session_ids`) when a session of the caller's that holds the document
 * has a job pending, in progress or awaiting approval (agent.CountActiveJobs, the revert guard).
 * Unknown and foreign documents have no holders, so this never reveals one.
 */
export async function refuseWhileJobRunning(call: RouteCall, durableId: string): Promise<void> {
  const { holders } = await call.ctx.workspace.listDocumentHolders(
    { durableDocumentIds: [durableId], excludeSessionId: "" },
    call.rpc(),
  );
  const sessionIds = [...new Set(holders.map((h) => h.sessionId))];
  const counts = await Promise.all(
    sessionIds.map(async (sessionId) => (await call.ctx.jobs.countActiveJobs({ sessionId }, call.rpc())).count),
  );
  const busy = sessionIds.filter((_, i) => counts[i] > 0);
  if (busy.length === 0) return;
  throw new ConflictError(
    "A chat job is running or awaiting approval on a session that holds this document; wait for it or cancel it",
    { code: "job_running", session_ids: busy },
  );
}

/** The HTML of a durable document at head. */
export async function headHtml(call: RouteCall, durableId: string): Promise<{ html: string; versionId: string }> {
  const doc = await call.ctx.documents.getDocument(
    { documentId: durableId, versionId: "", includeChunks: true },
    call.rpc(),
  );
  return { html: chunksToHtml(doc.chunks), versionId: doc.document?.versionId ?? "" };
}

/** A version's JSON (VersionSchema); `session_id` is left out when no session committed it. */
export function versionJson(v: documentsLibraryV1.VersionInfo) {
  return {
    version_id: v.versionId,
    seq: v.seq,
    kind: v.kind,
    ...(v.sessionId && { session_id: v.sessionId }),
    created_at: v.createdAt,
    chunks_changed: v.chunksChanged,
    summary: v.summary,
  };
}
