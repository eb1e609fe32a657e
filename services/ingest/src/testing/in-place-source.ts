// A .docx converted as an upload is, with the source the in-place writer takes (the package, its
// chunk map and the chunks as loaded): what every in-place export test starts from.
import { chunkHtml } from "@redline/html-chunks";
import { convertDocx } from "../converters/docx.js";
import { DEFAULT_LIMITS } from "../formats.js";

/** `bytes` converted (source kept) and chunked, with the in-place writer's `source` for them. */
export async function inPlaceSource(bytes: Buffer, name: string) {
  const converted = await convertDocx(bytes, name, DEFAULT_LIMITS, { keepSource: true });
  const { chunks } = chunkHtml(converted.html);
  const map = converted.source?.map ?? { format: "docx" as const, chunks: {} };
  const source = {
    format: "docx" as const,
    bytes,
    map,
    loaded: Object.fromEntries(chunks.map((c) => [c.chunkId, c.html])),
  };
  return { converted, html: converted.html, chunks, map, source };
}
