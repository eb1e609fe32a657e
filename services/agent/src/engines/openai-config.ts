// The OpenAI engine's configuration (read from the environment by config.ts).

/** Where the engine finds an OpenAI-compatible chat completions API and how hard it tries. */
export interface OpenAiEngineConfig {
  /** Base URL including the version path, e.g. `https://api.openai.com/v1`. */
  baseURL: string;
  apiKey: string;
  /** Model name per chat `model_tier`. */
  models: Record<"core" | "turbo" | "pro" | "max", string>;
  /** Cap on one model request, from send to the end of its stream, in milliseconds. */
  requestTimeoutMs: number;
  /** Tool-call rounds per turn at `balanced` depth (fast: half, deep: 1.5x), e.g. 24. */
  maxSteps: number;
  /** Retries on connection errors, 408/409 and 5xx other than a 503 with Retry-After; default 1. */
  maxRetries?: number;
  /**
   * The model's context window in tokens (OPENAI_CONTEXT_TOKENS); read, outline and history
   * budgets are cut to fit it (openai-context.ts). Unset: budgets sized for 128k-token models.
   */
  contextTokens?: number;
  /**
   * How tools reach the model (OPENAI_TOOL_MODE): `auto` (default) sends OpenAI `tools` and falls
   * back to the structured-output protocol when the server rejects them; `native` never falls
   * back; `structured` always uses the fallback (for servers that silently ignore `tools`).
   */
  toolMode?: "auto" | "native" | "structured";
  /**
   * Longest wait a provider's Retry-After (429/503) is honoured for, in ms (OPENAI_RETRY_AFTER_MAX_S);
   * asked for longer, the request fails at once. Default 60 s.
   */
  retryAfterMaxMs?: number;
}
