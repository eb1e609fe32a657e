// Paths and helpers shared by the system tests: the sample contract we ship, and the corpus of
// real documents kept in the repository (test/fixtures/corpus, see its MANIFEST.md).
import { readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { readCorpus } from "../fixtures/corpus.js";

export const REPO_ROOT = resolve(import.meta.dirname, "..", "..");

/** The sample contract shipped in samples/ (written by us). */
export function sampleContract(): string {
  return readFileSync(join(REPO_ROOT, "samples", "contract.html"), "utf8");
}

/** A corpus file's bytes, e.g. corpusFile("docx/tika-testWORD_various.docx"). */
export function corpusFile(relative: string): Buffer {
  return readCorpus(relative);
}

/**
 * The chunks of a document's HTML as chunkId → outer HTML. Chunks are joined with "\n" and only
 * chunk elements carry data-chunk-id, so a split before each such opening tag recovers them.
 */
export function chunkMap(html: string): Map<string, string> {
  const map = new Map<string, string>();
  for (const part of html.split(/\n(?=<[a-zA-Z][a-zA-Z0-9]*\b[^>]*\bdata-chunk-id=)/)) {
    const m = /^<[^>]*\bdata-chunk-id="([^"]+)"/.exec(part);
    if (m) map.set(m[1], part);
  }
  return map;
}
