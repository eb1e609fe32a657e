// Phase 3 of a turn (ARCHITECTURE "One chat turn" 2.5, "Async chat jobs" Approval): only after
// the engine finished, the turn's writes go to documents in one call (CommitTurn: the content it
// loaded, as the chunks prepare made, and its net operations), or the content is stored and the
// operations staged for approval.
import type { agentV1, documentsV1, sessionsV1 } from "@redline/grpc-stubs";
import type { ChunkOperation } from "@redline/html-chunks";
import { required } from "@redline/service-kit";
import type { AgentContext } from "../context.js";
import type { JobState, StagedChange } from "../db/tables.js";
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

/** True when the turn stores content: a load, or a draft for a document not stored yet. */
function storesContent(prepared: PreparedTurn): boolean {
  return prepared.target?.load !== undefined || !prepared.target?.durableId;
}

/**
 * The turn's CommitTurn request: the content to store (the chunks prepare made and the engine
 * edited a copy of, so documents stores exactly what the turn edited; an empty draft for a new
 * document) and `ops`. The load's key makes a repeated store of it a replay.
 */
function turnRequest(actor: TurnActor, prepared: PreparedTurn, ops: ChunkOperation[]): documentsV1.CommitTurnRequest {
  const { target, sessionId, req } = prepared;
  const load = target?.load;
  return {
    documentId: target?.durableId ?? "",
    sessionId,
    load: storesContent(prepared)
      ? {
          chunks: target?.base ?? [],
          title: load?.title ?? "",
          pageSetup: load?.pageSetup,
          keepParts: load?.keepParts ?? false,
          source: load?.source,
          idempotencyKey: prepared.loadKey,
        }
      : undefined,
    baseVersionId: target?.baseVersionId ?? "",
    operations: ops.map(chunkOpToProto),
    summary: summarizeOperations(ops),
    // A job rerun after a crash must not commit twice.
    idempotencyKey: actor.commitKey ?? "",
    // Another session's commit merged in means head is not our working copy: its HTML comes back.
    returnChunksWhenMerged: req.responseMode !== "compact",
  };
}

/**
 * Writes the turn to documents in one call (none when it neither stores content nor has
 * operations) and returns the stored document with the answer. A load's checkpoint is the
 * head the write replaced (`previous_version_id`), so no read exists only to learn it.
 */
async function writeTurn(
  ctx: AgentContext,
  actor: TurnActor,
  prepared: PreparedTurn,
  ops: ChunkOperation[],
): Promise<{ stored: StoredDoc; res?: documentsV1.CommitTurnResponse }> {
  const { target } = prepared;
  if (target?.durableId && !storesContent(prepared) && ops.length === 0) {
    return { stored: { durableId: target.durableId, versionId: target.baseVersionId, title: target.title } };
  }
  const res = await ctx.documents.commitTurn(turnRequest(actor, prepared, ops), actor.opts);
  const meta = required(res.document, "document");
  const versionId = res.loadedVersionId || (target?.baseVersionId ?? "");
  if (target?.load) target.checkpointVersionId = res.previousVersionId;
  return { stored: { durableId: meta.documentId, versionId, title: meta.title }, res };
}

/**
 * The roster attach a stored document still needs (none when the slot already holds it); the
 * target's slot is updated to the stored document.
 */
function slotFor(prepared: PreparedTurn, stored: StoredDoc): PendingAttach | undefined {
  const { target } = prepared;
  if (target?.slot?.durableDocumentId === stored.durableId) return undefined;
  const attach: PendingAttach = { focus: true, slotId: target?.slot?.documentId ?? "" };
  if (target) {
    const { durableId, title, versionId } = stored;
    const documentId = target.slot?.documentId ?? "";
    target.slot = { documentId, durableDocumentId: durableId, title, focused: true, lastSeenVersionId: versionId };
  }
  return attach;
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
 * Stores the turn's content (no operations) and attaches it to the session now. Used before
 * staging changes, and after a refused commit, so the user's own content is saved even when
 * the AI's is not.
 */
export async function storeAndAttach(ctx: AgentContext, actor: TurnActor, prepared: PreparedTurn): Promise<StoredDoc> {
  const { stored } = await writeTurn(ctx, actor, prepared, []);
  const attach = slotFor(prepared, stored);
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
 * approve_all: stores the loaded content and commits the turn's net operations, one CommitTurn
 * (edits of chunks another session changed become conflicts, concurrent_merges); returns the
 * response's document_changes, or nothing when the turn neither loaded nor changed a document.
 * With `deferAttach`, a loaded document's roster attach is returned for finishTurn to do. A
 * commit that fails writes nothing; the content is then stored alone (a replay when the failed
 * call did store it: its load key) and attached.
 */
export async function commitTurn(
  ctx: AgentContext,
  actor: TurnActor,
  prepared: PreparedTurn,
  deferAttach: boolean,
): Promise<CommittedChanges> {
  const ops = prepared.working.operations();
  if (!prepared.target?.load && ops.length === 0) return {};
  let written: Awaited<ReturnType<typeof writeTurn>>;
  try {
    written = await writeTurn(ctx, actor, prepared, ops);
  } catch (err) {
    // The user's own content stays in the roster even when the AI's edits could not commit.
    if (ops.length > 0 && storesContent(prepared)) await storeAndAttach(ctx, actor, prepared).catch(() => {});
    throw err;
  }
  const { stored, res } = written;
  const attach = slotFor(prepared, stored);
  if (attach && !deferAttach) await attachStored(ctx, actor, prepared.sessionId, stored, attach);
  const documentChanges = documentChangesOf(prepared, stored, ops, res);
  return { documentChanges, stored, attach: deferAttach ? attach : undefined };
}

/** The response's document_changes of a turn's write. */
function documentChangesOf(
  prepared: PreparedTurn,
  stored: StoredDoc,
  ops: ChunkOperation[],
  res: documentsV1.CommitTurnResponse | undefined,
): agentV1.DocumentChanges {
  const compact = prepared.req.responseMode === "compact";
  const edited = ops.length > 0 && res !== undefined;
  const changes = edited ? res.changes : [];
  // Another session's commit was merged in: the head is not our working copy any more.
  const html = edited && res.merged ? res.chunks.map((c) => c.html).join("\n") : prepared.working.toHtml();
  return {
    updatedHtml: compact ? undefined : html,
    versionId: edited ? required(res.document, "document").versionId : stored.versionId,
    changesSummary: summarizeOperations(ops),
    requiresApproval: false,
    changes,
    chunkDiffs: changes,
    documentId: stored.durableId,
    concurrentMerges: edited ? concurrentMergesOf(res, stored.durableId) : [],
  };
}

/** The HTML of a document's head version. */
export async function headHtml(ctx: AgentContext, actor: Pick<TurnActor, "opts">, documentId: string): Promise<string> {
  const doc = await ctx.documents.getDocument({ documentId, versionId: "", includeChunks: true }, actor.opts);
  return doc.chunks.map((c) => c.html).join("\n");
}

/** concurrent_merges of a commit: chunks merged around, then this turn's edits recorded as conflicts. */
function concurrentMergesOf(
  committed: Pick<documentsV1.CommitTurnResponse, "mergedChunkIds" | "conflicts">,
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
