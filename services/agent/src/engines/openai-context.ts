// How much of the model's context window one turn may fill. Hosted models have 128k tokens and
// more; local servers often run 4k-8k (llama.cpp's and Ollama's defaults, LM Studio's presets), so
// a 20 KB read plus a long history overflows them. With OPENAI_CONTEXT_TOKENS set, the read,
// outline and history budgets are cut to fit it; unset, they are the defaults below (as before).

/** The byte budgets of one turn's tool results and prompt. */
export interface ContextBudgets {
  /** read_chunks returns about this many bytes of HTML per call. */
  readBytes: number;
  /** A single chunk bigger than this is cut (and marked as cut) when read alone. */
  singleChunkMaxBytes: number;
  /** One get_outline page. */
  outlineBytes: number;
  /** A document whose outline fits this goes whole into the system prompt. */
  inlineOutlineBytes: number;
  /** Earlier turns sent as context, newest first until this is used; Infinity = all given. */
  historyBytes: number;
}

/** The budgets without a configured context length: sized for 128k-token hosted models. */
export const DEFAULT_BUDGETS: ContextBudgets = {
  readBytes: 20_000,
  singleChunkMaxBytes: 64_000,
  outlineBytes: 24_000,
  inlineOutlineBytes: 8_000,
  historyBytes: Number.POSITIVE_INFINITY,
};

/** Bytes per token, counted low (HTML markup and non-English text tokenize densely). */
const BYTES_PER_TOKEN = 3;
/** Share of the window kept free for the model's answer. */
const ANSWER_SHARE = 0.25;
/** What the system prompt and the tool schemas take before any document text, in bytes. */
const FIXED_PROMPT_BYTES = 6_000;

/**
 * The budgets for a context window of `contextTokens` (undefined: DEFAULT_BUDGETS). Each is at
 * most its default, so a big window changes nothing; a small one gets reads of a few KB.
 */
export function budgetsFor(contextTokens: number | undefined): ContextBudgets {
  if (contextTokens === undefined) return DEFAULT_BUDGETS;
  const prompt = Math.max(2_000, contextTokens * BYTES_PER_TOKEN * (1 - ANSWER_SHARE) - FIXED_PROMPT_BYTES);
  const cap = (share: number, max: number, min = 500) => Math.round(Math.min(max, Math.max(min, prompt * share)));
  return {
    readBytes: cap(0.35, DEFAULT_BUDGETS.readBytes),
    singleChunkMaxBytes: cap(0.4, DEFAULT_BUDGETS.singleChunkMaxBytes),
    outlineBytes: cap(0.3, DEFAULT_BUDGETS.outlineBytes),
    inlineOutlineBytes: cap(0.15, DEFAULT_BUDGETS.inlineOutlineBytes, 0),
    historyBytes: cap(0.15, Number.POSITIVE_INFINITY, 0),
  };
}

/** The budgets after the provider said the context was exceeded: each halved. */
export function shrunk(budgets: ContextBudgets): ContextBudgets {
  const half = (n: number) => (Number.isFinite(n) ? Math.max(250, Math.floor(n / 2)) : n);
  return {
    readBytes: half(budgets.readBytes),
    singleChunkMaxBytes: half(budgets.singleChunkMaxBytes),
    outlineBytes: half(budgets.outlineBytes),
    inlineOutlineBytes: Math.floor(budgets.inlineOutlineBytes / 2),
    historyBytes: 0,
  };
}

/** The newest turns of `history` whose content fits `maxBytes` together, oldest first. */
export function fitHistory<T extends { content: string }>(history: T[], maxBytes: number): T[] {
  if (!Number.isFinite(maxBytes)) return history;
  const kept: T[] = [];
  let bytes = 0;
  for (let i = history.length - 1; i >= 0; i--) {
    bytes += Buffer.byteLength(history[i].content);
    if (bytes > maxBytes) break;
    kept.unshift(history[i]);
  }
  return kept;
}

/**
 * True when a provider's error says the prompt is longer than its context window. Seen:
 * OpenAI and vLLM "This model's maximum context length is N tokens" (code
 * context_length_exceeded), llama.cpp "the request exceeds the available context size"
 * (exceed_context_size_error), LM Studio and others "context length"/"context window".
 */
export function isContextLengthError(message: string, code?: string | null): boolean {
  if (code === "context_length_exceeded") return true;
  return /context[ _]length|context[ _]size|context window|maximum context|exceeds? the (available )?context|prompt is too long|too many tokens/i.test(
    message,
  );
}
