// The agent's model engines: the deterministic offline engine and the OpenAI-compatible one.
import { createOfflineEngine } from "./offline.js";
import { createOpenAiEngine, type OpenAiEngineConfig } from "./openai.js";
import type { Engine } from "./types.js";

export { createOfflineEngine, OFFLINE_HELP, type OfflineInstruction, parseOfflineInstruction } from "./offline.js";
export { createOpenAiEngine, OPENAI_ENGINE_TOOLS, type OpenAiEngineConfig } from "./openai.js";
export type { Engine, TurnInput, TurnOutput } from "./types.js";

/** Picks the engine for a deployment: OpenAI-compatible when configured, else offline. */
export function selectEngine(cfg: { openai?: OpenAiEngineConfig }): Engine {
  return cfg.openai ? createOpenAiEngine(cfg.openai) : createOfflineEngine();
}
