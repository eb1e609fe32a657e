// Text of a converted document per chunk, for attachment search. Pure HTML work: the pool's
// workers run it so a large attachment does not hold up the service's event loop.
import { chunkHtml, textOf } from "@redline/html-chunks";

/** Plain text of every non-empty chunk of `html`, whitespace collapsed, each cut to `maxChars`. */
export function chunkTexts(html: string, maxChars: number): string[] {
  return chunkHtml(html)
    .chunks.map((c) => textOf(c.html).replace(/\s+/g, " ").trim().slice(0, maxChars))
    .filter((t) => t.length > 0);
}
