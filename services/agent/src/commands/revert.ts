// Revert and redo-revert of a session (unshown-parts.md, Revert). Documents are restored by
// writing a NEW version whose content equals the checkpoint (history is never rewritten); the
// conversation's later turns leave the active history and can come back with redo-revert.
import type { agentRevertV1, sessionsCheckpointsV1, sessionsV1 } from "@redline/grpc-stubs";
import { type CallOpts, ConflictError, InputError, type Principal, required } from "@redline/service-kit";
import type { AgentContext } from "../context.js";
import { countActive } from "../db/store/jobs.js";

/** 409 job_active while a job is open on the session: a revert would race its commit. */
async function refuseWhileJobActive(ctx: AgentContext, principal: Principal, sessionId: string): Promise<void> {
  if ((await countActive(ctx.db, principal.ownerId, sessionId)) === 0) return;
  throw new ConflictError("A chat job is running or awaiting approval on this session; wait for it or cancel it", {
    code: "job_active",
  });
}

/** The document among `candidates` that has version `versionId`, or undefined. */
async function documentOfVersion(
  ctx: AgentContext,
  candidates: string[],
  versionId: string,
  opts: CallOpts,
): Promise<string | undefined> {
  for (const documentId of candidates) {
    try {
      await ctx.documents.getDocument({ documentId, versionId, includeChunks: false }, opts);
      return documentId;
    } catch {
      // Not this document's version (or not readable): try the next one.
    }
  }
  return undefined;
}

/** Writes a new version of `documentId` whose content is that of `versionId`; returns it. */
async function restoreVersion(
  ctx: AgentContext,
  documentId: string,
  versionId: string,
  sessionId: string,
  opts: CallOpts,
): Promise<{ from: string; to: string } | undefined> {
  const head = await ctx.documents.getDocument({ documentId, versionId: "", includeChunks: false }, opts);
  const from = required(head.document, "document").versionId;
  if (from === versionId) return undefined;
  const old = await ctx.documents.getDocument({ documentId, versionId, includeChunks: true }, opts);
  const meta = required(old.document, "document");
  const res = await ctx.documents.replaceDocument(
    {
      documentId,
      html: old.chunks.map((c) => c.html).join("\n"),
      sessionId,
      pageSetup: meta.pageSetup,
      title: meta.title,
      // The document's own chunks: its headers and footers stay parts.
      keepParts: true,
    },
    opts,
  );
  return { from, to: required(res.document, "document").versionId };
}

/** The focused document's state, optionally at a version; undefined when the session has none. */
async function documentState(
  ctx: AgentContext,
  documentId: string | undefined,
  versionId: string,
  opts: CallOpts,
): Promise<agentRevertV1.RevertDocumentState | undefined> {
  if (!documentId) return undefined;
  const doc = await ctx.documents.getDocument({ documentId, versionId, includeChunks: true }, opts);
  const meta = required(doc.document, "document");
  return {
    htmlContent: doc.chunks.map((c) => c.html).join("\n"),
    versionId: meta.versionId,
    chunkCount: doc.chunks.length,
    lastModified: meta.updatedAt,
    documentId,
  };
}

function focusedAfter(roster: sessionsV1.RosterEntry[], closing: Set<string>): sessionsV1.RosterEntry | undefined {
  const open = roster.filter((r) => !closing.has(r.documentId));
  return open.find((r) => r.focused) ?? open[0];
}

/**
 * Rewinds the session to the state just before the user message of `turnIndex`: 409 while a job
 * is open on the session, 404 for a turn not in the active history, 422 for one without a
 * restore point. Every document a reverted turn changed gets a new version equal to its
 * checkpoint; documents first opened by a reverted turn are closed in the roster. `dryRun`
 * reports the same answer without writing.
 */
export async function revertSession(
  ctx: AgentContext,
  principal: Principal,
  opts: CallOpts,
  req: agentRevertV1.RevertSessionRequest,
): Promise<agentRevertV1.RevertSessionResponse> {
  if (req.turnIndex < 0) throw new InputError("turn_index must be at least 0");
  await refuseWhileJobActive(ctx, principal, req.sessionId);
  const plan = await ctx.checkpoints.planRevert({ sessionId: req.sessionId, turnIndex: req.turnIndex }, opts);
  const session = required((await ctx.sessions.getSession({ sessionId: req.sessionId }, opts)).session, "session");
  const closing = new Set(plan.openedSlots.map((s) => s.slotId));
  const kept = session.roster.filter((r) => !closing.has(r.documentId) && r.durableDocumentId);
  const candidates = kept.map((r) => r.durableDocumentId);

  // The earliest checkpoint per document among the reverted turns is its state before turn k.
  const restore = new Map<string, string>();
  for (const turn of plan.turns) {
    if (!turn.checkpointId) continue;
    const documentId = await documentOfVersion(ctx, candidates, turn.checkpointId, opts);
    if (documentId && !restore.has(documentId)) restore.set(documentId, turn.checkpointId);
  }
  const focused = focusedAfter(session.roster, closing);
  const focusedDoc = focused?.durableDocumentId || undefined;
  const base = {
    sessionId: req.sessionId,
    revertedToTurn: req.turnIndex - 1,
    composeText: plan.composeText,
  };

  if (req.dryRun) {
    const state = await documentState(ctx, focusedDoc, focusedDoc ? (restore.get(focusedDoc) ?? "") : "", opts);
    return {
      ...base,
      archivedTurnCount: plan.turns.length,
      documentState: state,
      editorAction: state ? "update" : "clear",
      redoCheckpointId: "",
    };
  }

  const restored: sessionsCheckpointsV1.RestoredDocument[] = [];
  for (const [documentId, versionId] of restore) {
    const done = await restoreVersion(ctx, documentId, versionId, req.sessionId, opts);
    if (done) restored.push({ documentId, fromVersionId: done.from, toVersionId: done.to });
  }
  const applied = await ctx.checkpoints.applyRevert(
    { sessionId: req.sessionId, turnIndex: req.turnIndex, closeSlotIds: [...closing], restored },
    opts,
  );
  const state = await documentState(ctx, focusedDoc, "", opts);
  return {
    ...base,
    archivedTurnCount: applied.archivedTurnCount,
    documentState: state,
    editorAction: state ? "update" : "clear",
    redoCheckpointId: applied.redoCheckpointId,
  };
}

/**
 * Undoes a revert: the documents go back to their heads before it (again as new versions) and
 * the reverted turns and slots come back. 409 while a job is open, when it was undone already or
 * when turns were added since; 400 when turn_index is not the revert's; 404 for an unknown id.
 */
export async function redoRevert(
  ctx: AgentContext,
  principal: Principal,
  opts: CallOpts,
  req: agentRevertV1.RedoRevertRequest,
): Promise<agentRevertV1.RevertSessionResponse> {
  await refuseWhileJobActive(ctx, principal, req.sessionId);
  const record = (
    await ctx.checkpoints.getRevert({ sessionId: req.sessionId, redoCheckpointId: req.redoCheckpointId }, opts)
  ).revert;
  if (!record) throw new InputError("Unknown redo_checkpoint_id");
  if (record.turnIndex !== req.turnIndex) {
    throw new InputError(`turn_index ${req.turnIndex} does not match the revert (turn ${record.turnIndex})`);
  }
  if (record.undone) throw new ConflictError("This revert was already undone", { code: "revert_already_undone" });
  const history = await ctx.sessions.getHistory({ sessionId: req.sessionId }, opts);
  const since = record.createdAt?.getTime() ?? 0;
  if (history.messages.some((m) => (m.timestamp?.getTime() ?? 0) > since)) {
    throw new ConflictError("Turns were added after this revert; it can no longer be undone", {
      code: "revert_superseded",
    });
  }
  for (const r of record.restored) await restoreVersion(ctx, r.documentId, r.fromVersionId, req.sessionId, opts);
  await ctx.checkpoints.undoRevert({ sessionId: req.sessionId, redoCheckpointId: req.redoCheckpointId }, opts);
  const after = await ctx.sessions.getHistory({ sessionId: req.sessionId }, opts);
  const roster = after.session?.roster ?? [];
  const focused = roster.find((r) => r.focused) ?? roster[0];
  const state = await documentState(ctx, focused?.durableDocumentId || undefined, "", opts);
  const last = after.messages.reduce((max, m) => Math.max(max, m.turnIndex), -1);
  return {
    sessionId: req.sessionId,
    revertedToTurn: last,
    composeText: "",
    archivedTurnCount: 0,
    documentState: state,
    editorAction: state ? "update" : "clear",
    redoCheckpointId: "",
  };
}
