// Local file helpers: reading an input (a missing one is a usage error) and writing an output
// atomically (a temporary file next to it, then rename), so an interrupted write never leaves a
// half-written document in place of the user's file.
import { randomBytes } from "node:crypto";
import { readFile, rename, rm, stat, writeFile } from "node:fs/promises";
import { basename, dirname, join } from "node:path";
import { UsageError } from "./errors.js";

/** The file's bytes; a missing or unreadable path is a UsageError (exit 2). */
export async function readInput(path: string): Promise<Uint8Array> {
  try {
    return new Uint8Array(await readFile(path));
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === "ENOENT") throw new UsageError(`No such file: ${path}`);
    if (code === "EISDIR") throw new UsageError(`${path} is a directory`);
    throw new UsageError(`Cannot read ${path}: ${(err as Error).message}`);
  }
}

/** Writes `bytes` to `path` through a temporary sibling and a rename; keeps an existing file's mode. */
export async function writeAtomically(path: string, bytes: Uint8Array): Promise<void> {
  const tmp = join(dirname(path), `.${basename(path)}.${randomBytes(4).toString("hex")}.redline-tmp`);
  const mode = await stat(path).then(
    (s) => s.mode & 0o777,
    () => undefined,
  );
  try {
    await writeFile(tmp, bytes, mode === undefined ? {} : { mode });
    await rename(tmp, path);
  } catch (err) {
    await rm(tmp, { force: true });
    throw err;
  }
}
