// Phase 3 of a turn (ARCHITECTURE "One chat turn" 2.5, "Async chat jobs" Approval): only after
// the engine finished, the loaded content is stored, and the turn's net operations are either
// committed as one version or staged for approval.
import { type agentV1, documentsV1, type sessionsV1 } from "@redline/grpc-stubs";
import type { ChunkOperation } from "@redline/html-chunks";
import { required } from "@redline/service-kit";
import type { AgentContext } from "../context.js";
import type { JobState, StagedChange } from "../db/tables.js";
import { loadKey } from "./keys.js";
import { chunkOpToProto, sectionKeys, stageRecords, summarizeOperations } from "./operations.js";
import { type PreparedTurn, type TurnActor, turnCheckpoint } from "./prepare.js";

/** A stored document: durable id, the version the turn's edits apply to, title. */
export interface StoredDoc {
  durableId: string;
  versionId: string;
  title: string;
}

/** The roster attach a turn owes a document it stored (sessions.v1 RosterAttach). */
export type PendingAttach = sessionsV1.RosterAttach;

function storedOf(meta: documentsV1.DocumentMeta): StoredDoc {
  return { durableId: meta.documentId, versionId: meta.versionId, title: meta.title };
}

/** Writes the target's content: replaces a stored document with a load, creates a new one, or keeps it. */
async function writeDocument(ctx: AgentContext, actor: TurnActor, prepared: PreparedTurn): Promise<StoredDoc> {
  const { target, sessionId } = prepared;
  const html = (target?.base ?? []).map((c) => c.html).join("\n");
  const load = target?.load;
  if (load && target.durableId) {
    const { pageSetup, title, keepParts, source } = load;
    const req = { documentId: target.durableId, html, sessionId, pageSetup, title, keepParts, source };
    return storedOf(required((await ctx.documents.replaceDocument(req, actor.opts)).document, "document"));
  }
  if (target?.durableId) return { durableId: target.durableId, versionId: target.baseVersionId, title: target.title };
  const res = await ctx.documents.createDocument(
    {
      html,
      title: load?.title ?? "",
      pageSetup: load?.pageSetup,
      sessionId,
      // A job rerun after a crash gets the document its first run created, not a second copy.
      idempotencyKey: actor.commitKey ? loadKey(actor.commitKey) : "",
      keepParts: load?.keepParts ?? false,
      source: load?.source,
    },
    actor.opts,
  );
  return storedOf(required(res.document, "document"));
}

/**
 * Stores the turn's document (a load: create or replace; a new draft: create) and returns it
 * with the roster attach it still needs (none when the slot already holds it). The target's
 * slot is updated to the stored document.
 */
async function storeDocument(
  ctx: AgentContext,
  actor: TurnActor,
  prepared: PreparedTurn,
): Promise<{ stored: StoredDoc; attach?: PendingAttach }> {
  const { target } = prepared;
  const stored = await writeDocument(ctx, actor, prepared);
  if (target?.slot?.durableDocumentId === stored.durableId) return { stored };
  const attach: PendingAttach = { focus: true, slotId: target?.slot?.documentId ?? "" };
  if (target) {
    const { durableId, title, versionId } = stored;
    const documentId = target.slot?.documentId ?? "";
    target.slot = { documentId, durableDocumentId: durableId, title, focused: true, lastSeenVersionId: versionId };
  }
  return { stored, attach };
}

/** Puts a stored document in the session's roster now. */
async function attachStored(
  ctx: AgentContext,
  actor: TurnActor,
  sessionId: string,
  stored: StoredDoc,
  attach: PendingAttach,
): Promise<void> {
  const { durableId, title, versionId } = stored;
  const req = { sessionId, durableDocumentId: durableId, title, focus: attach.focus, versionId, slotId: attach.slotId };
  await ctx.sessions.attachDocument(req, actor.opts);
}

/**
 * Stores the turn's document and attaches it to the session now. Used before staging changes,
 * so the user's own content is saved even when the AI's is not.
 */
export async function storeAndAttach(ctx: AgentContext, actor: TurnActor, prepared: PreparedTurn): Promise<StoredDoc> {
  const { stored, attach } = await storeDocument(ctx, actor, prepared);
  if (attach) await attachStored(ctx, actor, prepared.sessionId, stored, attach);
  return stored;
}

/** What commitTurn wrote: the response's document_changes, the stored document, a deferred attach. */
export interface CommittedChanges {
  documentChanges?: agentV1.DocumentChanges;
  stored?: StoredDoc;
  attach?: PendingAttach;
}

/**
 * approve_all: stores the loaded content and commits the turn's net operations as one version
 * (edits of chunks another session changed become conflicts, concurrent_merges); returns the
 * response's document_changes, or nothing when the turn neither loaded nor changed a document.
 * With `deferAttach`, a loaded document's roster attach is returned for finishTurn to do; a
 * commit that fails still attaches it.
 */
export async function commitTurn(
  ctx: AgentContext,
  actor: TurnActor,
  prepared: PreparedTurn,
  deferAttach: boolean,
): Promise<CommittedChanges> {
  if (!prepared.target?.load && prepared.working.operations().length === 0) return {};
  if (!deferAttach) {
    const stored = await storeAndAttach(ctx, actor, prepared);
    return { documentChanges: await commitStored(ctx, actor, prepared, stored), stored };
  }
  const { stored, attach } = await storeDocument(ctx, actor, prepared);
  try {
    return { documentChanges: await commitStored(ctx, actor, prepared, stored), stored, attach };
  } catch (err) {
    // The user's own content stays in the roster even when the AI's edits could not commit.
    if (attach) await attachStored(ctx, actor, prepared.sessionId, stored, attach).catch(() => {});
    throw err;
  }
}

/** Commits the turn's operations on the stored document; the response's document_changes. */
async function commitStored(
  ctx: AgentContext,
  actor: TurnActor,
  prepared: PreparedTurn,
  stored: StoredDoc,
): Promise<agentV1.DocumentChanges> {
  const { req, working, sessionId } = prepared;
  const ops = working.operations();
  const compact = req.responseMode === "compact";
  let changes: documentsV1.ChangeRecord[] = [];
  let concurrentMerges: agentV1.ConcurrentMerge[] = [];
  let versionId = stored.versionId;
  let html = working.toHtml();
  if (ops.length > 0) {
    const committed = await ctx.documents.commitOperations(
      {
        documentId: stored.durableId,
        baseVersionId: stored.versionId,
        sessionId,
        operations: ops.map(chunkOpToProto),
        summary: summarizeOperations(ops),
        returnChunks: false,
        // Edits of chunks another session changed since the base are recorded as conflicts
        // (concurrent_merges, resolved by re-edit) instead of failing the whole turn.
        recordConflicts: true,
        idempotencyKey: actor.commitKey ?? "",
        // The turn's edits are the AI's (tracked changes name it); the load before them is the user's.
        authorKind: documentsV1.AuthorKind.AUTHOR_KIND_AI,
      },
      actor.opts,
    );
    concurrentMerges = concurrentMergesOf(committed, stored.durableId);
    changes = committed.changes;
    versionId = required(committed.document, "document").versionId;
    // Another session's commit was merged in: the head is not our working copy any more.
    if (committed.merged && !compact) html = await headHtml(ctx, actor, stored.durableId);
  }
  const summary = summarizeOperations(ops);
  return {
    updatedHtml: compact ? undefined : html,
    versionId,
    changesSummary: summary,
    requiresApproval: false,
    changes,
    chunkDiffs: changes,
    documentId: stored.durableId,
    concurrentMerges,
  };
}

/** The HTML of a document's head version. */
export async function headHtml(ctx: AgentContext, actor: Pick<TurnActor, "opts">, documentId: string): Promise<string> {
  const doc = await ctx.documents.getDocument({ documentId, versionId: "", includeChunks: true }, actor.opts);
  return doc.chunks.map((c) => c.html).join("\n");
}

/** concurrent_merges of a commit: chunks merged around, then this turn's edits recorded as conflicts. */
function concurrentMergesOf(
  committed: documentsV1.CommitOperationsResponse,
  documentId: string,
): agentV1.ConcurrentMerge[] {
  return [
    ...committed.mergedChunkIds.map((chunkId) => ({ chunkId, status: "merged", conflictId: "", documentId })),
    ...committed.conflicts.map((c) => ({
      chunkId: c.chunkId,
      status: "conflict",
      conflictId: c.conflictId,
      documentId,
    })),
  ];
}

/**
 * ask_every_time: stores (and attaches) the loaded content, then stages the turn's net
 * operations as pending changes: their records (one batch) and the state the decisions need.
 */
export async function stageTurn(
  ctx: AgentContext,
  actor: TurnActor,
  prepared: PreparedTurn,
  reply: string,
  timedOut: boolean,
): Promise<{ records: StagedChange[]; staged: NonNullable<JobState["staged"]> }> {
  const ops = prepared.working.operations();
  const stored = await storeAndAttach(ctx, actor, prepared);
  const records = stageRecords(ops, prepared.base, prepared.working, stored.durableId);
  const operations: Record<string, ChunkOperation> = {};
  records.forEach((r, i) => {
    operations[r.change_id] = ops[i];
  });
  const staged = {
    durableId: stored.durableId,
    headVersionId: stored.versionId,
    checkpointVersionId: turnCheckpoint(prepared),
    title: stored.title,
    slotId: prepared.target?.slot?.documentId ?? "",
    reply,
    operations,
    applied: [],
    sectionOf: sectionKeys(records, prepared.base, prepared.working),
    timedOut,
  };
  return { records, staged };
}
