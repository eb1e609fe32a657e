// The contract between the agent service and its model engines. The service builds the
// WorkingDocument from stored chunks, runs one turn, and commits `document.operations()`.
import type { WorkingDocument } from "@redline/html-chunks";

/** One passage of an attachment. */
export interface AttachmentPassage {
  filename: string;
  chunkIndex: number;
  text: string;
}

/** What the engines may ask about the session's files (bound to the session and caller). */
export interface TurnFiles {
  /** Completed attachments of the session; the model is offered attachment tools only when > 0. */
  attachmentCount: number;
  /** Full-text search over completed attachments; `filename` narrows to names containing it. */
  searchAttachments(query: string, filename?: string, limit?: number): Promise<AttachmentPassage[]>;
  /** A template's name and HTML by id or name, or null when there is none. */
  getTemplate(ref: string): Promise<{ name: string; title: string; html: string } | null>;
}

/** What an engine gets for one turn: the instruction, the document to edit in place, context. */
export interface TurnInput {
  message: string;
  document: WorkingDocument; // may be empty (document.isEmpty()); edits are made on it
  documentTitle: string;
  history: { sender: "user" | "ai"; content: string }[]; // earlier turns, oldest first (may be trimmed)
  modelTier: "core" | "turbo" | "pro" | "max";
  thinkingDepth: "fast" | "balanced" | "deep";
  images: { name: string; mimeType: string; base64Data: string }[];
  /**
   * The request's response_mode; absent: full. In compact mode the client gets the reply and the
   * changed chunks only, never the document, so content the user asks to see goes in the reply
   * text (interface spec, endpoint 1).
   */
  responseMode?: "full" | "compact";
  cursor?: { chunkId?: string; selectedText?: string };
  memoryNote?: string;
  /** The session's attachments and the caller's templates (search/quote tools, drafting); absent when unavailable. */
  files?: TurnFiles;
  signal: AbortSignal; // fires at the wall-clock cap; stop promptly and reject
  onProgress?: (text: string) => void;
}
/** What an engine answers: the reply text and what the turn cost in tool calls and bytes. */
export interface TurnOutput {
  reply: string;
  toolCalls: number;
  bytesSentToModel: number;
  /** True when the engine stopped at its step limit before finishing (a long edit may go on). */
  stoppedAtStepLimit?: boolean;
}
/** A model engine: offline (deterministic rules) or OpenAI-compatible. */
export interface Engine {
  readonly name: "offline" | "openai";
  runTurn(input: TurnInput): Promise<TurnOutput>;
}

/**
 * A turn with no history, images or title, core tier at balanced depth, and a signal that never
 * fires unless `rest` gives one: what a one-off rewrite (re-edit) or a test runs.
 */
export function plainTurn(message: string, document: WorkingDocument, rest: Partial<TurnInput> = {}): TurnInput {
  const signal = new AbortController().signal;
  return {
    message,
    document,
    documentTitle: "",
    history: [],
    modelTier: "core",
    thinkingDepth: "balanced",
    images: [],
    signal,
    ...rest,
  };
}
