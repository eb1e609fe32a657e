// The contract between the agent service and its model engines. The service builds the
// WorkingDocument from stored chunks, runs one turn, and commits `document.operations()`.
import type { WorkingDocument } from "@redline/html-chunks";

export interface TurnInput {
  message: string;
  document: WorkingDocument; // may be empty (document.isEmpty()); edits are made on it
  documentTitle: string;
  history: { sender: "user" | "ai"; content: string }[]; // earlier turns, oldest first (may be trimmed)
  modelTier: "core" | "turbo" | "pro" | "max";
  thinkingDepth: "fast" | "balanced" | "deep";
  images: { name: string; mimeType: string; base64Data: string }[];
  cursor?: { chunkId?: string; selectedText?: string };
  memoryNote?: string;
  signal: AbortSignal; // fires at the wall-clock cap; stop promptly and reject
  onProgress?: (text: string) => void;
}
export interface TurnOutput {
  reply: string;
  toolCalls: number;
  bytesSentToModel: number;
}
export interface Engine {
  readonly name: "offline" | "openai";
  runTurn(input: TurnInput): Promise<TurnOutput>;
}
