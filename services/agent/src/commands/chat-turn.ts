// One synchronous chat turn (interface-spec endpoint 1). Nothing is written until the engine
// has finished: the quota is reserved first, the document is loaded and the edits committed
// after, so a refused or failed turn leaves no partial state behind.
import { randomUUID } from "node:crypto";
import { type agentV1, type billingV1, documentsV1, type sessionsV1 } from "@redline/grpc-stubs";
import { type ChunkOperation, type ChunkRecord, WorkingDocument } from "@redline/html-chunks";
import { AiTimeoutError, type CallContext, type CallOpts, InputError, NotFoundError } from "@redline/service-kit";
import type { AgentContext } from "../context.js";
import type { TurnInput } from "../engines/index.js";

/** Sections per extra billed operation (interface-spec Limits: 1 more per 25 sections). */
const SECTIONS_PER_EXTRA_OP = 25;

const MODEL_TIERS = ["core", "turbo", "pro", "max"] as const;
const DEPTHS = ["fast", "balanced", "deep"] as const;

/** The document a turn works on, before anything is persisted. */
interface Target {
  /** Roster slot when the document is already open in the session. */
  slot?: sessionsV1.RosterEntry;
  /** Durable id, empty for a document not stored yet. */
  durableId: string;
  /** Version the engine's base corresponds to; empty when the base is new content. */
  baseVersionId: string;
  title: string;
  pageSetupJson: string;
  /** HTML to store before the edits (document_html or an upload), else undefined. */
  load?: { html: string; title: string; pageSetupJson: string };
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

function summarize(ops: ChunkOperation[]): string {
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

async function resolveTarget(
  ctx: AgentContext,
  req: agentV1.ChatRequest,
  roster: sessionsV1.RosterEntry[],
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

  let load: Target["load"];
  if (req.upload) {
    // Large files take longer to convert than the default RPC deadline.
    const converted = await ctx.ingest.convertDocument(
      { filename: req.upload.filename, content: req.upload.content },
      { ...opts, timeoutMs: 120_000 },
    );
    load = { html: converted.html, title: converted.title, pageSetupJson: converted.pageSetupJson };
  } else if (req.documentHtml !== undefined) {
    load = { html: req.documentHtml, title: "", pageSetupJson: "" };
  }
  if (load) {
    const base = WorkingDocument.fromHtml(load.html).chunks();
    return { slot, durableId, baseVersionId: "", title: load.title, pageSetupJson: load.pageSetupJson, load, base };
  }
  if (!durableId) {
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
  opts: CallOpts,
): Promise<{ durableId: string; versionId: string; title: string }> {
  const html = target.base.map((c) => c.html).join("\n");
  if (target.load && target.durableId) {
    const res = await ctx.documents.replaceDocument(
      {
        documentId: target.durableId,
        html,
        sessionId,
        pageSetupJson: target.load.pageSetupJson,
        title: target.load.title,
      },
      opts,
    );
    const meta = res.document as documentsV1.DocumentMeta;
    return { durableId: meta.documentId, versionId: meta.versionId, title: meta.title };
  }
  if (target.durableId) return { durableId: target.durableId, versionId: target.baseVersionId, title: target.title };
  const res = await ctx.documents.createDocument(
    { html, title: target.load?.title ?? "", pageSetupJson: target.load?.pageSetupJson ?? "", sessionId },
    opts,
  );
  const meta = res.document as documentsV1.DocumentMeta;
  return { durableId: meta.documentId, versionId: meta.versionId, title: meta.title };
}

async function runEngine(ctx: AgentContext, input: Omit<TurnInput, "signal">) {
  const signal = AbortSignal.timeout(ctx.cfg.aiTimeoutMs);
  try {
    return await ctx.engine.runTurn({ ...input, signal });
  } catch (err) {
    if (signal.aborted)
      throw new AiTimeoutError(`AI processing exceeded the ${Math.round(ctx.cfg.aiTimeoutMs / 1000)}-second limit`);
    throw err;
  }
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
  const opts = call.forward();
  const chargeKey = `chat:${randomUUID()}`;
  let charged = false;
  await ctx.billing.reserveOperations({ chargeKey, operations: 1 }, opts);
  try {
    const ensured = await ctx.sessions.ensureSession({ sessionId: req.sessionId }, opts);
    const session = ensured.session as sessionsV1.Session;
    const sessionId = session.sessionId;
    const target = await resolveTarget(ctx, req, session.roster, opts);

    const base = new WorkingDocument(target?.base ?? []);
    const working = new WorkingDocument(target?.base ?? []);
    const history =
      ctx.engine.name === "offline" || ensured.created
        ? []
        : (await ctx.sessions.getHistory({ sessionId }, opts)).messages
            .slice(-2 * ctx.cfg.historyTurns)
            .map((m) => ({ sender: m.sender as "user" | "ai", content: m.content }));
    const output = await runEngine(ctx, {
      message: req.message,
      document: working,
      documentTitle: target?.title ?? "",
      history,
      modelTier: pick(req.modelTier, MODEL_TIERS, "core"),
      thinkingDepth: pick(req.thinkingDepth, DEPTHS, "balanced"),
      images: req.imageAttachments.map((i) => ({ name: i.name, mimeType: i.mimeType, base64Data: i.base64Data })),
      cursor: req.cursorContext
        ? { chunkId: req.cursorContext.chunkId || undefined, selectedText: req.cursorContext.selectedText || undefined }
        : undefined,
      onProgress: (text) => call.log.debug({ progress: text }, "turn progress"),
    });
    const ops = working.operations();

    let documentChanges: agentV1.DocumentChanges | undefined;
    let stored: { durableId: string; versionId: string; title: string } | undefined;
    if (target?.load || ops.length > 0) {
      const loadTarget: Target = target ?? { durableId: "", baseVersionId: "", title: "", pageSetupJson: "", base: [] };
      stored = await persistLoad(ctx, loadTarget, sessionId, opts);
      let changes: documentsV1.ChangeRecord[] = [];
      let versionId = stored.versionId;
      let html = working.toHtml();
      if (ops.length > 0) {
        const committed = await ctx.documents.commitOperations(
          {
            documentId: stored.durableId,
            baseVersionId: stored.versionId,
            sessionId,
            operations: ops.map(toProtoOp),
            summary: summarize(ops),
            returnChunks: false,
          },
          opts,
        );
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
      if (target?.slot?.durableDocumentId !== stored.durableId) {
        await ctx.sessions.attachDocument(
          {
            sessionId,
            durableDocumentId: stored.durableId,
            title: stored.title,
            focus: true,
            versionId,
            slotId: target?.slot?.documentId ?? "",
          },
          opts,
        );
      }
      documentChanges = {
        updatedHtml: req.responseMode === "compact" ? undefined : html,
        versionId,
        changesSummary: summarize(ops),
        requiresApproval: false,
        changes,
        chunkDiffs: changes,
        documentId: stored.durableId,
      };
    }

    const operations = ops.length > 0 ? 1 + Math.floor(sectionsChanged(base, working, ops) / SECTIONS_PER_EXTRA_OP) : 0;
    const settled = await ctx.billing.settleOperations({ chargeKey, operations }, opts);
    charged = true;
    const turn = await ctx.sessions.appendTurn(
      {
        sessionId,
        userMessage: req.message,
        aiMessage: output.reply,
        checkpointVersionId: target?.baseVersionId ?? "",
        durableDocumentId: documentChanges?.documentId ?? "",
        versionId: documentChanges?.versionId ?? "",
        title: stored?.title ?? target?.title ?? "",
      },
      opts,
    );
    return {
      response: output.reply,
      sessionId,
      documentChanges,
      usage: settled.usage as billingV1.Usage,
      turnIndex: turn.turnIndex,
      engine: ctx.engine.name,
    };
  } catch (err) {
    if (!charged) {
      await ctx.billing
        .settleOperations({ chargeKey, operations: 0 }, opts)
        .catch((e) => call.log.error({ err: e }, "releasing the reservation failed"));
    }
    throw err;
  }
}
