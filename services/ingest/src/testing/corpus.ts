// Test helpers: the shared corpus is read in place (never copied into the repo).
import { readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

/** The repository root (this file is services/ingest/src/testing/corpus.ts). */
export const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../../..");

/** The shared corpus, a sibling of the repository (see /work/shared/corpus/MANIFEST.md). */
export const corpusDir = path.resolve(repoRoot, "../shared/corpus");

/** Absolute path of a corpus file, e.g. corpusPath("docx/tika-testWORD_various.docx"). */
export function corpusPath(relative: string): string {
  return path.join(corpusDir, relative);
}

/** The bytes of a corpus file. */
export function readCorpus(relative: string): Buffer {
  return readFileSync(corpusPath(relative));
}
