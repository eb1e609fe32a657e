// Error types of the chunk model. Both carry a machine-readable `code` so callers
// (the documents service, the agent's tool layer) can map them to responses.

/** Codes carried by ChunkError and ToolError. */
export type ChunkErrorCode =
  | "malformed_html"
  | "not_one_block"
  | "unknown_chunk"
  | "duplicate_chunk"
  | "empty"
  | "not_heading"
  | "not_table"
  | "invalid_operation"
  | "invalid_argument";

/** The shape both errors share; `name` is the concrete class's, as before they shared it. */
abstract class CodedError extends Error {
  readonly code: ChunkErrorCode;

  constructor(code: ChunkErrorCode, message: string) {
    super(message);
    this.name = new.target.name;
    this.code = code;
  }
}

/** Thrown by the pure chunk functions (validation, applyOperations, helpers). */
export class ChunkError extends CodedError {}

/** Thrown by WorkingDocument operations; the document is left unchanged when it is thrown. */
export class ToolError extends CodedError {
  /** Re-labels a ChunkError as a ToolError, keeping code and message. */
  static from(err: unknown): unknown {
    return err instanceof ChunkError ? new ToolError(err.code, err.message) : err;
  }
}
