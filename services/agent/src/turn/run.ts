// Phase 2 of a turn (ARCHITECTURE "One chat turn" 2.4): the engine runs on the prepared
// WorkingDocument under the wall-clock cap; edits accumulate on `prepared.working`.
import type { AgentContext } from "../context.js";
import type { TurnInput, TurnOutput } from "../engines/index.js";
import type { PreparedTurn } from "./prepare.js";

const MODEL_TIERS = ["core", "turbo", "pro", "max"] as const;
const DEPTHS = ["fast", "balanced", "deep"] as const;

function pick<T extends string>(value: string, allowed: readonly T[], fallback: T): T {
  return (allowed as readonly string[]).includes(value) ? (value as T) : fallback;
}

/** Extra inputs of the engine phase. */
export interface EngineRun {
  /** Aborts the turn from outside (a cancel, a lost lease); the engine rejects promptly. */
  signal?: AbortSignal;
  onProgress?: (text: string) => void;
  /** Said to the model after the history, e.g. feedback on denied changes. */
  extraHistory?: TurnInput["history"];
}

/** How the engine phase ended: its output, or `timedOut` when the wall-clock cap stopped it. */
export type EngineResult = { output: TurnOutput; timedOut: false } | { output?: undefined; timedOut: true };

/**
 * Runs the engine under the wall-clock cap (`cfg.aiTimeoutMs`) and `run.signal`. Past the cap it
 * resolves `{timedOut: true}` (the edits so far stay on `prepared.working`); an engine error or
 * an outside abort rejects.
 */
export async function runTurn(ctx: AgentContext, prepared: PreparedTurn, run: EngineRun): Promise<EngineResult> {
  const cap = AbortSignal.timeout(ctx.cfg.aiTimeoutMs);
  const { req } = prepared;
  try {
    const output = await ctx.engine.runTurn({
      message: req.message,
      document: prepared.working,
      documentTitle: prepared.target?.title ?? "",
      history: [...prepared.history, ...(run.extraHistory ?? [])],
      modelTier: pick(req.modelTier, MODEL_TIERS, "core"),
      thinkingDepth: pick(req.thinkingDepth, DEPTHS, "balanced"),
      responseMode: req.responseMode === "compact" ? "compact" : "full",
      images: [
        ...req.imageAttachments.map((i) => ({ name: i.name, mimeType: i.mimeType, base64Data: i.base64Data })),
        ...(prepared.attachmentImages ?? []),
      ],
      cursor: req.cursorContext
        ? { chunkId: req.cursorContext.chunkId || undefined, selectedText: req.cursorContext.selectedText || undefined }
        : undefined,
      signal: run.signal ? AbortSignal.any([cap, run.signal]) : cap,
      onProgress: run.onProgress,
      memoryNote: prepared.memoryNote,
      files: prepared.files,
    });
    return { output, timedOut: false };
  } catch (err) {
    if (run.signal?.aborted || !cap.aborted) throw err;
    return { timedOut: true };
  }
}

/** The wall-clock cap's message, in seconds (sync 504 detail, async wrap-up). */
export function aiTimeoutText(ctx: AgentContext): string {
  return `AI processing exceeded the ${Math.round(ctx.cfg.aiTimeoutMs / 1000)}-second limit`;
}
