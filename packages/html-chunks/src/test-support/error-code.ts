// Test support: the `code` an operation fails with, so tests assert codes rather than messages.
import type { ChunkErrorCode } from "../errors.js";

/** The code of the `type` error `fn` throws; "no error" when it returns; other errors rethrown. */
export function errorCode(
  fn: () => unknown,
  type: abstract new (...args: never[]) => { code: ChunkErrorCode },
): string {
  try {
    fn();
  } catch (err) {
    if (err instanceof type) return err.code;
    throw err;
  }
  return "no error";
}
