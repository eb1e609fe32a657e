// Re-edit of one chunk after a concurrent-edit conflict (interface-spec endpoint 18): `redo`
// re-applies the AI's change on the user's current text, `merge` blends both versions. One
// billable operation. With an OpenAI-compatible engine the model rewrites the chunk; the offline
// engine (and a model that changes nothing) uses the deterministic rules below.
import { type agentV1, documentsV1 } from "@redline/grpc-stubs";
import { textOf, WorkingDocument } from "@redline/html-chunks";
import { type CallOpts, InputError, NotFoundError, required } from "@redline/service-kit";
import type { AgentContext } from "../context.js";
import { plainTurn } from "../engines/types.js";
import { reEditChargeKey } from "../turn/keys.js";
import { finishSyncTurn, withReservation } from "../turn/ledger.js";
import type { TurnActor } from "../turn/prepare.js";

const WORD = /[\p{L}\p{N}_]/u;
/** Characters of left context used to place a pure insertion. */
const INSERT_CONTEXT = 30;

function escapeHtml(text: string): string {
  return text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
}

/**
 * The AI's edit `base` → `next`, re-applied on the user's `current` HTML: the changed span
 * (widened to whole words) is replaced where it still occurs in `current`; a pure insertion goes
 * after the same left context. When the span no longer occurs, the AI's version wins. An empty
 * side means a delete: the user deleted (the AI's version comes back) or the AI deleted ("").
 */
export function redoChunk(base: string, next: string, current: string): string {
  if (!current) return next;
  if (!next) return "";
  let p = 0;
  while (p < base.length && p < next.length && base[p] === next[p]) p++;
  let s = 0;
  while (s < base.length - p && s < next.length - p && base[base.length - 1 - s] === next[next.length - 1 - s]) s++;
  while (p > 0 && WORD.test(base[p - 1])) p--;
  while (s > 0 && WORD.test(base[base.length - s])) s--;
  const removed = base.slice(p, base.length - s);
  const added = next.slice(p, next.length - s);
  if (removed === added) return current;
  if (removed) {
    const at = current.indexOf(removed);
    return at >= 0 ? current.slice(0, at) + added + current.slice(at + removed.length) : next;
  }
  const left = base.slice(Math.max(0, p - INSERT_CONTEXT), p);
  const at = left ? current.indexOf(left) : -1;
  return at >= 0 ? current.slice(0, at + left.length) + added + current.slice(at + left.length) : next;
}

/**
 * Both versions kept: the user's HTML, followed (inside its element) by the sentences of the
 * AI's version that the user's text does not already contain, in their order.
 */
export function mergeChunk(user: string, ai: string): string {
  if (!user) return ai;
  if (!ai) return user;
  const userText = textOf(user).replace(/\s+/g, " ");
  const missing = textOf(ai)
    .replace(/\s+/g, " ")
    .split(/(?<=[.!?;:])\s+/)
    .map((sentence) => sentence.trim())
    .filter((sentence) => sentence && !userText.includes(sentence));
  if (missing.length === 0) return user;
  const close = /<\/([a-zA-Z][a-zA-Z0-9]*)>\s*$/.exec(user);
  if (!close) return user;
  return `${user.slice(0, close.index)} ${escapeHtml(missing.join(" "))}${user.slice(close.index)}`;
}

/** The two sides of a conflict: the AI's edit (base → next) and the user's text. */
interface Sides {
  aiBase: string;
  aiNext: string;
  user: string;
}

function sidesOf(conflict: documentsV1.ConflictRecord, headHtml: string): Sides {
  // A chat turn lost: its edit is "ours", the user's text is what head holds now. A save lost:
  // the user's text is the save, and the change it met (head) is the other side's.
  return conflict.kind === "chat"
    ? { aiBase: conflict.baseHtml, aiNext: conflict.oursHtml, user: headHtml }
    : { aiBase: conflict.baseHtml, aiNext: headHtml, user: conflict.oursHtml };
}

async function rewriteWithModel(
  ctx: AgentContext,
  chunkId: string,
  mode: "redo" | "merge",
  sides: Sides,
  instruction: string,
): Promise<string | undefined> {
  const start = sides.user || sides.aiNext;
  if (!start) return undefined;
  const doc = new WorkingDocument([{ chunkId, html: start }]);
  const task =
    mode === "redo"
      ? "Re-apply the AI's change (before → after below) to the user's current text of this chunk."
      : "Blend the user's current text and the AI's version into one chunk that keeps the intent of both.";
  const message = [
    `Two sessions edited chunk ${chunkId} at the same time. ${task} Replace chunk ${chunkId} only.`,
    `AI's change, before: ${sides.aiBase || "(none)"}`,
    `AI's change, after: ${sides.aiNext || "(deleted)"}`,
    `User's current text: ${sides.user || "(deleted)"}`,
    instruction ? `Guidance: ${instruction}` : "",
  ].filter(Boolean);
  await ctx.engine.runTurn(plainTurn(message.join("\n"), doc, { signal: AbortSignal.timeout(ctx.cfg.aiTimeoutMs) }));
  const out = doc.chunks().find((c) => c.chunkId === chunkId)?.html;
  return out && out !== start ? out : undefined;
}

/** The durable ids of the session's documents, or of the one `documentId` names (404 when not open). */
async function sessionDocuments(ctx: AgentContext, req: agentV1.ReEditChunkRequest, opts: CallOpts): Promise<string[]> {
  const { session } = await ctx.sessions.getSession({ sessionId: req.sessionId }, opts);
  const roster = session?.roster ?? [];
  if (!req.documentId) return roster.map((r) => r.durableDocumentId).filter(Boolean);
  const slot = roster.find((r) => r.documentId === req.documentId || r.durableDocumentId === req.documentId);
  if (!slot?.durableDocumentId) throw new NotFoundError("Document not open in this session");
  return [slot.durableDocumentId];
}

/** The chunk's new HTML: the model's rewrite (OpenAI engine), else the deterministic rule of `mode`. */
async function rewrite(
  ctx: AgentContext,
  req: agentV1.ReEditChunkRequest,
  mode: "redo" | "merge",
  sides: Sides,
): Promise<string> {
  const fromModel =
    ctx.engine.name === "openai" ? await rewriteWithModel(ctx, req.chunkId, mode, sides, req.instruction) : undefined;
  return (
    fromModel ??
    (mode === "redo" ? redoChunk(sides.aiBase, sides.aiNext, sides.user) : mergeChunk(sides.user, sides.aiNext))
  );
}

/**
 * Resolves the newest open conflict of `chunkId` in the session's documents (interface-spec
 * endpoint 18): computes the rewritten chunk, commits it on head (closing the conflict) and
 * bills one operation (429 when the quota is spent; released when anything fails). 400 for a
 * mode other than redo or merge; NotFoundError for an unknown session, a document not in the
 * session, or a chunk with no open conflict.
 */
export async function runReEdit(
  ctx: AgentContext,
  actor: TurnActor,
  req: agentV1.ReEditChunkRequest,
): Promise<agentV1.ReEditChunkResponse> {
  if (req.mode !== "redo" && req.mode !== "merge") throw new InputError("mode must be redo or merge");
  const mode = req.mode;
  const { opts } = actor;
  const documentIds = await sessionDocuments(ctx, req, opts);
  const found = await ctx.library.findConflicts({ documentIds, chunkId: req.chunkId }, opts);
  const conflict = found.conflicts[0];
  if (!conflict) throw new NotFoundError(`No concurrent edit to resolve on chunk ${req.chunkId}`);
  const chargeKey = reEditChargeKey();
  return withReservation(ctx, actor, chargeKey, async (held) => {
    const { documentId, conflictId } = conflict;
    const head = await ctx.documents.getDocument({ documentId, versionId: "", includeChunks: true }, opts);
    const headHtml = head.chunks.find((c) => c.chunkId === req.chunkId)?.html ?? "";
    const html = await rewrite(ctx, req, mode, sidesOf(conflict, headHtml));
    const { sessionId, chunkId } = req;
    const resolved = await ctx.library.resolveConflict(
      { conflictId, documentId, chunkId, html, sessionId, authorKind: documentsV1.AuthorKind.AUTHOR_KIND_AI },
      opts,
    );
    // Committed: a settle billing does not answer in time is owed to the record outbox.
    const { usage } = await finishSyncTurn(ctx, actor, { chargeKey, operations: 1 }, held);
    return { chunkId, html: resolved.html, versionId: required(resolved.document, "document").versionId, usage };
  });
}
