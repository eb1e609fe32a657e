// One synchronous chat turn (interface-spec endpoint 1). Nothing is written until the engine
// has finished: the quota is reserved first, the document is loaded and the edits committed
// after, so a refused or failed turn leaves no partial state behind.
import { randomUUID } from "node:crypto";
import { type agentV1, type billingV1, documentsV1, type sessionsV1 } from "@redline/grpc-stubs";
import { type ChunkOperation, type ChunkRecord, chunkHtml, WorkingDocument } from "@redline/html-chunks";
import {
  AiTimeoutError,
  type CallContext,
  type CallOpts,
  InputError,
  type Logger,
  NotFoundError,
  type Principal,
} from "@redline/service-kit";
import type { AgentContext } from "../context.js";
import type { TurnInput, TurnOutput } from "../engines/index.js";
import { sessionAttachments, turnFiles } from "./turn-files.js";

/** Sections per extra billed operation (interface-spec Limits: 1 more per 25 sections). */
const SECTIONS_PER_EXTRA_OP = 25;

const MODEL_TIERS = ["core", "turbo", "pro", "max"] as const;
const DEPTHS = ["fast", "balanced", "deep"] as const;

/** The document a turn works on, before anything is persisted. */
export interface Target {
  /** Roster slot when the document is already open in the session. */
  slot?: sessionsV1.RosterEntry;
  /** Durable id, empty for a document not stored yet. */
  durableId: string;
  /** Version the engine's base corresponds to; empty when the base is new content. */
  baseVersionId: string;
  /** The document's head before a load replaced it (the turn's checkpoint); unset otherwise. */
  checkpointVersionId?: string;
  title: string;
  pageSetupJson: string;
  /** HTML to store before the edits (document_html or an upload), else undefined. */
  /** `keepParts`: the HTML's data-part marks come from a docx/rtf/pdf file's structure. */
  load?: { html: string; title: string; pageSetupJson: string; keepParts: boolean };
  base: ChunkRecord[];
}

function pick<T extends string>(value: string, allowed: readonly T[], fallback: T): T {
  return (allowed as readonly string[]).includes(value) ? (value as T) : fallback;
}

const OP_KIND = {
  replace: documentsV1.OperationKind.OPERATION_KIND_REPLACE,
  insert: documentsV1.OperationKind.OPERATION_KIND_INSERT,
  delete: documentsV1.OperationKind.OPERATION_KIND_DELETE,
} as const;

function toProtoOp(op: ChunkOperation): documentsV1.ChunkOperation {
  return {
    kind: OP_KIND[op.kind],
    chunkId: op.chunkId,
    html: op.kind === "delete" ? "" : op.html,
    afterChunkId: op.kind === "insert" ? (op.afterChunkId ?? "") : "",
    explanation: op.explanation,
  };
}

/** Heading-anchored sections touched by the operations, counted on the base and the result. */
export function sectionsChanged(base: WorkingDocument, result: WorkingDocument, ops: ChunkOperation[]): number {
  const touched = new Set(ops.map((op) => op.chunkId));
  const keys = new Set<string>();
  for (const [label, doc] of [
    ["b", base],
    ["r", result],
  ] as const) {
    for (const s of doc.sections()) {
      if (s.chunkIds.some((id) => touched.has(id))) keys.add(s.headingChunkId ?? `${label}:lead`);
    }
  }
  return Math.max(1, keys.size);
}

/** One-line summary of operations ("2 chunks edited, 1 chunk added"; "No changes"). */
export function summarizeOperations(ops: ChunkOperation[]): string {
  if (ops.length === 0) return "No changes";
  const n = (kind: ChunkOperation["kind"]) => ops.filter((o) => o.kind === kind).length;
  const parts = [
    [n("replace"), "edited"],
    [n("insert"), "added"],
    [n("delete"), "deleted"],
  ]
    .filter(([count]) => (count as number) > 0)
    .map(([count, verb]) => `${count} chunk${count === 1 ? "" : "s"} ${verb}`);
  return parts.join(", ");
}

/** Content a turn loads (document_html or an upload), chunked: independent of the session. */
interface LoadedContent {
  load: NonNullable<Target["load"]>;
  base: ChunkRecord[];
}

/** Converts an upload (415 for an unsupported type) or chunks document_html; undefined without either. */
async function loadContent(
  ctx: AgentContext,
  req: agentV1.ChatRequest,
  opts: CallOpts,
): Promise<LoadedContent | undefined> {
  let load: Target["load"];
  if (req.upload) {
    // Large files take longer to convert than the default RPC deadline.
    const converted = await ctx.ingest.convertDocument(
      { filename: req.upload.filename, content: req.upload.content },
      { ...opts, timeoutMs: 120_000 },
    );
    load = {
      html: converted.html,
      title: converted.title,
      pageSetupJson: converted.pageSetupJson,
      keepParts: converted.partsFromFile,
    };
  } else if (req.documentHtml !== undefined) {
    // Caller-written: its part marks would turn blocks into headers/footers/comments.
    load = { html: req.documentHtml, title: "", pageSetupJson: "", keepParts: false };
  } else {
    return undefined;
  }
  // Chunked as the documents service will store it, so the turn edits exactly what is stored.
  return { load, base: chunkHtml(load.html, { parts: load.keepParts ? "keep" : "drop" }).chunks };
}

async function resolveTarget(
  ctx: AgentContext,
  req: agentV1.ChatRequest,
  roster: sessionsV1.RosterEntry[],
  loaded: LoadedContent | undefined,
  opts: CallOpts,
): Promise<Target | null> {
  let slot: sessionsV1.RosterEntry | undefined;
  let durableId = "";
  if (req.documentId) {
    slot = roster.find((r) => r.documentId === req.documentId || r.durableDocumentId === req.documentId);
    durableId = slot?.durableDocumentId ?? req.documentId;
  } else {
    slot = roster.find((r) => r.focused) ?? roster[0];
    durableId = slot?.durableDocumentId ?? "";
  }

  if (loaded) {
    const { load, base } = loaded;
    // Replacing a stored document: its head before the turn is the turn's restore point.
    const checkpointVersionId = durableId
      ? ((await ctx.documents.getDocument({ documentId: durableId, versionId: "", includeChunks: false }, opts))
          .document?.versionId ?? "")
      : "";
    return {
      slot,
      durableId,
      baseVersionId: "",
      checkpointVersionId,
      title: load.title,
      pageSetupJson: load.pageSetupJson,
      load,
      base,
    };
  }
  if (!durableId) {
    // A blank tab (no durable document until its first save): the turn drafts into its slot.
    if (slot) return { slot, durableId: "", baseVersionId: "", title: "", pageSetupJson: "", base: [] };
    if (req.documentId) throw new NotFoundError("Document not found");
    return null;
  }
  const doc = await ctx.documents.getDocument({ documentId: durableId, versionId: "", includeChunks: true }, opts);
  const meta = doc.document as documentsV1.DocumentMeta;
  return {
    slot,
    durableId,
    baseVersionId: meta.versionId,
    title: meta.title,
    pageSetupJson: meta.pageSetupJson,
    base: doc.chunks,
  };
}

/** Stores the loaded content (create or replace) and returns the durable id and its version. */
async function persistLoad(
  ctx: AgentContext,
  target: Target,
  sessionId: string,
  actor: TurnActor,
): Promise<{ durableId: string; versionId: string; title: string }> {
  const { opts } = actor;
  const html = target.base.map((c) => c.html).join("\n");
  if (target.load && target.durableId) {
    const res = await ctx.documents.replaceDocument(
      {
        documentId: target.durableId,
        html,
        sessionId,
        pageSetupJson: target.load.pageSetupJson,
        title: target.load.title,
        keepParts: target.load.keepParts,
      },
      opts,
    );
    const meta = res.document as documentsV1.DocumentMeta;
    return { durableId: meta.documentId, versionId: meta.versionId, title: meta.title };
  }
  if (target.durableId) return { durableId: target.durableId, versionId: target.baseVersionId, title: target.title };
  const res = await ctx.documents.createDocument(
    {
      html,
      title: target.load?.title ?? "",
      pageSetupJson: target.load?.pageSetupJson ?? "",
      sessionId,
      // A job rerun after a crash gets the document its first run created, not a second copy.
      idempotencyKey: actor.commitKey ? `${actor.commitKey}:load` : "",
      keepParts: target.load?.keepParts ?? false,
    },
    opts,
  );
  const meta = res.document as documentsV1.DocumentMeta;
  return { durableId: meta.documentId, versionId: meta.versionId, title: meta.title };
}

/** Who a turn acts for: the caller's principal, call options forwarding it, and a logger. */
export interface TurnActor {
  principal: Principal;
  opts: CallOpts;
  log: Logger;
  /** Idempotency key of the turn's commit (jobs: a rerun after a crash must not commit twice). */
  commitKey?: string;
}

/** A turn after its inputs are resolved and before the engine runs (nothing written yet but the session). */
export interface PreparedTurn {
  req: agentV1.ChatRequest;
  sessionId: string;
  target: Target | null;
  /** The document before the turn. */
  base: WorkingDocument;
  /** The engine's copy: its `operations()` are the turn's net edits. */
  working: WorkingDocument;
  history: TurnInput["history"];
  /** The cross-session memory note (account level or cross_session_memory_key), read at the start. */
  memoryNote?: string;
  /** The session's attachments and the caller's templates (turn-files.ts). */
  files?: TurnInput["files"];
  /** Completed image attachments of the session, sent as vision input (model engines only). */
  attachmentImages?: TurnInput["images"];
}

/**
 * Phase 1: ensures the session (403 for a foreign id) with its recent history and memory note,
 * loads the content to edit (an upload is converted, 415) and resolves the target document
 * (404). Independent reads run together: each is a round trip on every turn.
 */
export async function prepareTurn(
  ctx: AgentContext,
  actor: TurnActor,
  req: agentV1.ChatRequest,
  opts: { newSession?: boolean; context?: sessionsV1.GetTurnContextResponse } = {},
): Promise<PreparedTurn> {
  const callOpts = actor.opts;
  const modelEngine = ctx.engine.name !== "offline";
  const [context, loaded, attachments] = await Promise.allSettled([
    // A job created on this instance brings the context its creation read a moment ago.
    opts.context ??
      ctx.sessions.getTurnContext(
        {
          sessionId: req.sessionId,
          historyLimit: turnHistoryLimit(ctx),
          memoryKey: req.crossSessionMemoryKey,
        },
        callOpts,
      ),
    loadContent(ctx, req, callOpts),
    // A session minted by this turn (or its job) has no attachments yet.
    modelEngine && req.sessionId && !opts.newSession
      ? sessionAttachments(ctx, req.sessionId, callOpts, actor.log)
      : Promise.resolve({ count: 0, images: [] }),
  ]);
  // The session's refusal wins, as when the session was ensured before anything else ran.
  if (context.status === "rejected") throw context.reason;
  if (loaded.status === "rejected") throw loaded.reason;
  if (attachments.status === "rejected") throw attachments.reason;
  const session = context.value.session as sessionsV1.Session;
  const sessionId = session.sessionId;
  const target = await resolveTarget(ctx, req, session.roster, loaded.value, callOpts);
  return {
    req,
    sessionId,
    target,
    base: new WorkingDocument(target?.base ?? []),
    working: new WorkingDocument(target?.base ?? []),
    history: context.value.messages.map((m) => ({ sender: m.sender as "user" | "ai", content: m.content })),
    memoryNote: context.value.memoryNote,
    files: turnFiles(ctx, sessionId, callOpts, actor.log, attachments.value.count),
    attachmentImages: attachments.value.images,
  };
}

/** Messages of recent history a turn reads for its engine (none for the offline engine). */
export function turnHistoryLimit(ctx: AgentContext): number {
  return ctx.engine.name !== "offline" ? 2 * ctx.cfg.historyTurns : 0;
}

/** The turn's checkpoint: the version of its document before the turn ("" when it had none). */
export function turnCheckpoint(prepared: PreparedTurn): string {
  return prepared.target?.checkpointVersionId || prepared.target?.baseVersionId || "";
}

/** Extra inputs of the engine phase. */
export interface EngineRun {
  /** Aborts the turn (the wall-clock cap, a cancel); the engine rejects promptly. */
  signal: AbortSignal;
  onProgress?: (text: string) => void;
  /** Said to the model after the history, e.g. feedback on denied changes. */
  extraHistory?: TurnInput["history"];
}

/** Phase 2: runs the engine on the prepared WorkingDocument; edits accumulate on `prepared.working`. */
export async function runTurnEngine(ctx: AgentContext, prepared: PreparedTurn, run: EngineRun): Promise<TurnOutput> {
  const { req } = prepared;
  return ctx.engine.runTurn({
    message: req.message,
    document: prepared.working,
    documentTitle: prepared.target?.title ?? "",
    history: [...prepared.history, ...(run.extraHistory ?? [])],
    modelTier: pick(req.modelTier, MODEL_TIERS, "core"),
    thinkingDepth: pick(req.thinkingDepth, DEPTHS, "balanced"),
    images: [
      ...req.imageAttachments.map((i) => ({ name: i.name, mimeType: i.mimeType, base64Data: i.base64Data })),
      ...(prepared.attachmentImages ?? []),
    ],
    cursor: req.cursorContext
      ? { chunkId: req.cursorContext.chunkId || undefined, selectedText: req.cursorContext.selectedText || undefined }
      : undefined,
    signal: run.signal,
    onProgress: run.onProgress,
    memoryNote: prepared.memoryNote,
    files: prepared.files,
  });
}

/** The wall-clock cap's message, in seconds (sync 504 detail, async wrap-up). */
export function aiTimeoutText(ctx: AgentContext): string {
  return `AI processing exceeded the ${Math.round(ctx.cfg.aiTimeoutMs / 1000)}-second limit`;
}

async function runEngine(ctx: AgentContext, prepared: PreparedTurn, log: Logger): Promise<TurnOutput> {
  const signal = AbortSignal.timeout(ctx.cfg.aiTimeoutMs);
  try {
    return await runTurnEngine(ctx, prepared, {
      signal,
      onProgress: (text) => log.debug({ progress: text }, "turn progress"),
    });
  } catch (err) {
    if (signal.aborted) throw new AiTimeoutError(aiTimeoutText(ctx));
    throw err;
  }
}

/** A stored document: durable id, the version the turn's edits apply to, title. */
export interface StoredDoc {
  durableId: string;
  versionId: string;
  title: string;
}

/** The roster attach a turn owes a document it stored (sessions.v1 RosterAttach). */
export type PendingAttach = sessionsV1.RosterAttach;

/**
 * Stores a loaded document (document_html or an upload; create or replace) and returns it, or
 * undefined when the turn has no document at all, with the roster attach it needs: done here
 * with `attachNow`, else returned for the turn's record to do (one round trip fewer per turn).
 * Used before staging changes, so the user's own content is saved even when the AI's is not.
 */
export async function storeLoad(
  ctx: AgentContext,
  actor: TurnActor,
  prepared: PreparedTurn,
  force: boolean,
  attachNow = true,
): Promise<{ stored?: StoredDoc; attach?: PendingAttach }> {
  const { target, sessionId } = prepared;
  if (!target?.load && !force)
    return target?.durableId
      ? { stored: { durableId: target.durableId, versionId: target.baseVersionId, title: target.title } }
      : {};
  const loadTarget: Target = target ?? { durableId: "", baseVersionId: "", title: "", pageSetupJson: "", base: [] };
  const stored = await persistLoad(ctx, loadTarget, sessionId, actor);
  if (target?.slot?.durableDocumentId === stored.durableId) return { stored };
  const attach: PendingAttach = { focus: true, slotId: target?.slot?.documentId ?? "" };
  if (target)
    target.slot = {
      documentId: target.slot?.documentId ?? "",
      durableDocumentId: stored.durableId,
      title: stored.title,
      focused: true,
      lastSeenVersionId: stored.versionId,
    };
  if (!attachNow) return { stored, attach };
  await attachStored(ctx, actor, sessionId, stored, attach);
  return { stored };
}

/** Puts a stored document in the session's roster now. */
async function attachStored(
  ctx: AgentContext,
  actor: TurnActor,
  sessionId: string,
  stored: StoredDoc,
  attach: PendingAttach,
): Promise<void> {
  await ctx.sessions.attachDocument(
    {
      sessionId,
      durableDocumentId: stored.durableId,
      title: stored.title,
      focus: attach.focus,
      versionId: stored.versionId,
      slotId: attach.slotId,
    },
    actor.opts,
  );
}

/** The documents service's operation from a html-chunks operation. */
export function chunkOpToProto(op: ChunkOperation): documentsV1.ChunkOperation {
  return toProtoOp(op);
}

/** Operations billed for a turn: 1, plus 1 per 25 sections changed; 0 when nothing changed. */
export function billedOperations(sections: number, opsCount: number): number {
  return opsCount > 0 ? 1 + Math.floor(sections / SECTIONS_PER_EXTRA_OP) : 0;
}

/**
 * Phase 3 (approve_all): stores the loaded content and commits the turn's net operations as one
 * version (409 chunk_conflict from documents when a chunk changed since the base); returns the
 * response's document_changes, or undefined when the turn neither loaded nor changed a document.
 * With `deferAttach`, a loaded document's roster attach is returned for recordTurn to do.
 */
export async function commitTurn(
  ctx: AgentContext,
  actor: TurnActor,
  prepared: PreparedTurn,
  deferAttach = false,
): Promise<{ documentChanges?: agentV1.DocumentChanges; stored?: StoredDoc; attach?: PendingAttach }> {
  const { target, working, sessionId } = prepared;
  const ops = working.operations();
  if (!target?.load && ops.length === 0) return {};
  const { stored, attach } = (await storeLoad(ctx, actor, prepared, true, !deferAttach)) as {
    stored: StoredDoc;
    attach?: PendingAttach;
  };
  try {
    return { ...(await commitStored(ctx, actor, prepared, stored)), stored, attach };
  } catch (err) {
    // The user's own content stays in the roster even when the AI's edits could not commit.
    if (attach) await attachStored(ctx, actor, sessionId, stored, attach).catch(() => {});
    throw err;
  }
}

/** Commits the turn's operations on the stored document; the response's document_changes. */
async function commitStored(
  ctx: AgentContext,
  actor: TurnActor,
  prepared: PreparedTurn,
  stored: StoredDoc,
): Promise<{ documentChanges: agentV1.DocumentChanges }> {
  const { req, working, sessionId } = prepared;
  const { opts } = actor;
  const ops = working.operations();
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
        operations: ops.map(toProtoOp),
        summary: summarizeOperations(ops),
        returnChunks: false,
        // Edits of chunks another session changed since the base are recorded as conflicts
        // (concurrent_merges, resolved by re-edit) instead of failing the whole turn.
        recordConflicts: true,
        idempotencyKey: actor.commitKey ?? "",
      },
      opts,
    );
    concurrentMerges = concurrentMergesOf(committed, stored.durableId);
    changes = committed.changes;
    versionId = (committed.document as documentsV1.DocumentMeta).versionId;
    // Another session's commit was merged in: the head is not our working copy any more.
    if (committed.merged && req.responseMode !== "compact") {
      html = (
        await ctx.documents.getDocument({ documentId: stored.durableId, versionId: "", includeChunks: true }, opts)
      ).chunks
        .map((c) => c.html)
        .join("\n");
    }
  }
  return {
    documentChanges: {
      updatedHtml: req.responseMode === "compact" ? undefined : html,
      versionId,
      changesSummary: summarizeOperations(ops),
      requiresApproval: false,
      changes,
      chunkDiffs: changes,
      documentId: stored.durableId,
      concurrentMerges,
    },
  };
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
 * Phase 4: settles the charge (`operations`, 0 releases it; idempotent per key) and records the
 * turn (user message, AI reply, checkpoint = the version before the turn), with the roster
 * attach a stored load still owes and the memory note line. Returns the usage and turn index.
 */
export async function recordTurn(
  ctx: AgentContext,
  actor: TurnActor,
  prepared: PreparedTurn,
  input: {
    chargeKey: string;
    operations: number;
    reply: string;
    documentChanges?: agentV1.DocumentChanges;
    title: string;
    /** The user's message when the engine was given another (a continued job). */
    userMessage?: string;
    /** The version before the turn when it started earlier (a continued job). */
    checkpointVersionId?: string;
    /** The roster attach commitTurn deferred. */
    attach?: PendingAttach;
  },
): Promise<{ usage: billingV1.Usage; turnIndex: number }> {
  // Settling (idempotent per key) and recording are independent writes: one round trip, not two.
  const [settled, turn] = await Promise.all([
    ctx.billing.settleOperations({ chargeKey: input.chargeKey, operations: input.operations }, actor.opts),
    ctx.sessions.appendTurn(
      {
        sessionId: prepared.sessionId,
        userMessage: input.userMessage ?? prepared.req.message,
        aiMessage: input.reply,
        checkpointVersionId: input.checkpointVersionId ?? turnCheckpoint(prepared),
        durableDocumentId: input.documentChanges?.documentId ?? "",
        versionId: input.documentChanges?.versionId ?? "",
        title: input.title,
        attach: input.documentChanges?.documentId ? input.attach : undefined,
        // The memory note keeps the account's (or end-customer's) recent instructions, bounded.
        remember: true,
        memoryKey: prepared.req.crossSessionMemoryKey,
        memoryNoteSeen: prepared.memoryNote,
      },
      actor.opts,
    ),
  ]);
  return { usage: settled.usage as billingV1.Usage, turnIndex: turn.turnIndex };
}

/**
 * Runs one chat turn for the caller: reserve quota (429), resolve the session (403 for a foreign
 * id) and the target document (404), run the engine under the wall-clock cap (504), then store
 * the loaded content, commit the edits as one version, settle the charge (1 operation, plus 1
 * per 25 sections changed; 0 when nothing changed) and record the turn.
 */
export async function runChatTurn(
  ctx: AgentContext,
  call: CallContext,
  req: agentV1.ChatRequest,
): Promise<agentV1.ChatResponse> {
  if (!call.principal) throw new InputError("no principal on the call");
  if (!req.message.trim()) throw new InputError("message must not be empty");
  const actor: TurnActor = { principal: call.principal, opts: call.forward(), log: call.log };
  const chargeKey = `chat:${randomUUID()}`;
  let charged = false;
  await ctx.billing.reserveOperations({ chargeKey, operations: 1 }, actor.opts);
  try {
    const prepared = await prepareTurn(ctx, actor, req);
    const output = await runEngine(ctx, prepared, call.log);
    const ops = prepared.working.operations();
    const { documentChanges, stored, attach } = await commitTurn(ctx, actor, prepared, true);
    // Edits that all met another session's commit (recorded as conflicts) changed nothing: free.
    const applied = ops.length > 0 && documentChanges?.changes.length === 0 ? 0 : ops.length;
    const operations = billedOperations(sectionsChanged(prepared.base, prepared.working, ops), applied);
    const { usage, turnIndex } = await recordTurn(ctx, actor, prepared, {
      chargeKey,
      operations,
      reply: output.reply,
      documentChanges,
      title: stored?.title ?? prepared.target?.title ?? "",
      attach,
    });
    charged = true;
    return {
      response: output.reply,
      sessionId: prepared.sessionId,
      documentChanges,
      usage,
      turnIndex,
      engine: ctx.engine.name,
    };
  } catch (err) {
    if (!charged) {
      await ctx.billing
        .settleOperations({ chargeKey, operations: 0 }, actor.opts)
        .catch((e) => call.log.error({ err: e }, "releasing the reservation failed"));
    }
    throw err;
  }
}
