// Phase 1 of a turn (ARCHITECTURE "One chat turn" 2.1 and 2.3): the upload is converted, the
// session's context is read and the target document resolved. Nothing of the turn is written
// here but the session ensured by GetTurnContext.
import type { agentV1, commonSourceV1, commonV1, sessionsV1 } from "@redline/grpc-stubs";
import { type ChunkRecord, chunkHtml, seededChunkIds, WorkingDocument } from "@redline/html-chunks";
import { type CallOpts, type Logger, NotFoundError, type Principal, required } from "@redline/service-kit";
import type { AgentContext, HandedContext } from "../context.js";
import type { TurnInput } from "../engines/index.js";
import { sessionAttachments, turnFiles } from "./files.js";
import { loadKey, turnLoadKey } from "./keys.js";
import { landOwedRecords } from "./record-outbox.js";

/** The document a turn works on, before anything is persisted. */
export interface Target {
  /** Roster slot when the document is already open in the session. */
  slot?: sessionsV1.RosterEntry;
  /** Durable id, empty for a document not stored yet. */
  durableId: string;
  /** Version the engine's base corresponds to; empty when the base is new content. */
  baseVersionId: string;
  /**
   * The document's head before a load replaced it (the turn's checkpoint), set from the write's
   * answer (CommitTurn's previous_version_id); unset before it and without a load.
   */
  checkpointVersionId?: string;
  title: string;
  /** The document's page setup; undefined when none. */
  pageSetup?: commonV1.PageSetup;
  /**
   * HTML to store before the edits (document_html or an upload), else undefined. `keepParts`:
   * the HTML's data-part marks come from a docx/rtf/pdf file's structure. `source`: the
   * upload's original, kept by ingest, that the stored document records (export in place).
   */
  load?: {
    html: string;
    title: string;
    pageSetup?: commonV1.PageSetup;
    keepParts: boolean;
    source?: commonSourceV1.SourceRef;
  };
  base: ChunkRecord[];
}

/** Who a turn acts for: the caller's principal, call options forwarding it, and a logger. */
export interface TurnActor {
  principal: Principal;
  opts: CallOpts;
  log: Logger;
  /** Idempotency key of the turn's commit (jobs: a rerun after a crash must not commit twice). */
  commitKey?: string;
  /** The caller's deadline (sync turns): finishing waits no longer than just before it. */
  deadline?: Date | null;
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
  /** The session's attachments and the caller's templates (files.ts). */
  files?: TurnInput["files"];
  /** Completed image attachments of the session, sent as vision input (model engines only). */
  attachmentImages?: TurnInput["images"];
  /** Idempotency key of the content the turn stores (CommitTurn's load): storing it again replays. */
  loadKey: string;
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
  commitKey?: string,
): Promise<LoadedContent | undefined> {
  let load: Target["load"];
  if (req.upload) {
    // Large files take longer to convert than the default RPC deadline.
    const converted = await ctx.ingest.convertDocument(
      // The upload becomes the turn's document: its original is kept to export in place.
      { filename: req.upload.filename, content: req.upload.content, keepSource: true },
      { ...opts, timeoutMs: 120_000 },
    );
    const { html, title, pageSetup, source } = converted;
    load = { html, title, pageSetup, keepParts: converted.partsFromFile, source };
  } else if (req.documentHtml !== undefined) {
    // Caller-written: its part marks would turn blocks into headers/footers/comments.
    load = { html: req.documentHtml, title: "", keepParts: false };
  } else {
    return undefined;
  }
  // Chunked as the documents service will store it, so the turn edits exactly what is stored. A
  // keyed turn (a job) mints its ids from its load key: a rerun after a crash gets back the
  // document its first run stored (CreateDocument is idempotent) and must edit the same ids.
  const mintId = commitKey ? seededChunkIds(loadKey(commitKey)) : undefined;
  return { load, base: chunkHtml(load.html, { parts: load.keepParts ? "keep" : "drop", mintId }).chunks };
}

/** The `document_id` slot (404 when unknown) or the focused one; null when the session has none. */
async function resolveTarget(
  ctx: AgentContext,
  req: agentV1.ChatRequest,
  roster: sessionsV1.RosterEntry[],
  loaded: LoadedContent | undefined,
  opts: CallOpts,
): Promise<Target | null> {
  const slot = req.documentId
    ? roster.find((r) => r.documentId === req.documentId || r.durableDocumentId === req.documentId)
    : (roster.find((r) => r.focused) ?? roster[0]);
  const durableId = slot?.durableDocumentId ?? req.documentId;
  if (loaded) {
    // Replacing a stored document: its head before the write is the turn's restore point, which
    // the write answers (persist.ts); an unknown id is refused by that write (404).
    const { load, base } = loaded;
    return { slot, durableId, baseVersionId: "", checkpointVersionId: "", ...pageOf(load), load, base };
  }
  if (!durableId) {
    // A blank tab (no durable document until its first save): the turn drafts into its slot.
    if (slot) return { slot, durableId: "", baseVersionId: "", title: "", base: [] };
    if (req.documentId) throw new NotFoundError("Document not found");
    return null;
  }
  const doc = await ctx.documents.getDocument({ documentId: durableId, versionId: "", includeChunks: true }, opts);
  const meta = required(doc.document, "document");
  return { slot, durableId, baseVersionId: meta.versionId, ...pageOf(meta), base: doc.chunks };
}

function pageOf(from: { title: string; pageSetup?: commonV1.PageSetup }): Pick<Target, "title" | "pageSetup"> {
  return { title: from.title, pageSetup: from.pageSetup };
}

/**
 * Phase 1: ensures the session (403 for a foreign id) with its recent history and memory note,
 * loads the content to edit (an upload is converted, 415) and resolves the target document
 * (404). Independent reads run together: each is a round trip on every turn. A job created on
 * this instance brings the context its creation read (`context`).
 */
export async function prepareTurn(
  ctx: AgentContext,
  actor: TurnActor,
  req: agentV1.ChatRequest,
  opts: { newSession?: boolean; context?: HandedContext } = {},
): Promise<PreparedTurn> {
  const callOpts = actor.opts;
  // An earlier turn's record still owed goes first, so the history keeps the turns' order.
  if (req.sessionId) await landOwedRecords(ctx, req.sessionId);
  const modelEngine = ctx.engine.name !== "offline";
  const historyLimit = turnHistoryLimit(ctx);
  const [context, loaded, attachments] = await Promise.allSettled([
    opts.context ??
      ctx.sessions.getTurnContext(
        { sessionId: req.sessionId, historyLimit, memoryKey: req.crossSessionMemoryKey },
        callOpts,
      ),
    loadContent(ctx, req, callOpts, actor.commitKey),
    // A session minted by this turn (or its job) has no attachments yet.
    modelEngine && req.sessionId && !opts.newSession
      ? sessionAttachments(ctx, req.sessionId, callOpts, actor.log)
      : Promise.resolve({ count: 0, images: [] }),
  ]);
  // The session's refusal wins, as when the session was ensured before anything else ran.
  if (context.status === "rejected") throw context.reason;
  if (loaded.status === "rejected") throw loaded.reason;
  if (attachments.status === "rejected") throw attachments.reason;
  const session = required(context.value.session, "session");
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
    loadKey: actor.commitKey ? loadKey(actor.commitKey) : turnLoadKey(),
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
