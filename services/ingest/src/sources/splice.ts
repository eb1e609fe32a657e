// Writing a document back into its original file: untouched chunks as the original's bytes
// (with the original's separators between them), edited and new chunks re-serialized, deleted
// ones dropped. The byte-level splice serves markdown and text; `untouchedChunks` and
// `currentChunks` are what any in-place exporter (docx too) decides with.
import { type ChunkRecord, chunkHtml } from "@redline/html-chunks";
import iconv from "iconv-lite";
import { decodeText } from "../text/encoding.js";
import type { DocumentSource, SourceSpan } from "./types.js";

/** The export's chunks in document order, as the documents service stored them (ids kept). */
export function currentChunks(html: string): ChunkRecord[] {
  // Stored chunk HTML is chunkHtml's fixed point: re-chunking it gives the same strings, so a
  // chunk nobody edited compares equal to its loaded HTML.
  return chunkHtml(html, { sanitize: false }).chunks;
}

/** Ids of `chunks` whose HTML is what it was at load and that the original's map places. */
export function untouchedChunks(chunks: ChunkRecord[], source: DocumentSource): Set<string> {
  const out = new Set<string>();
  for (const c of chunks) {
    if (!Object.hasOwn(source.map.chunks, c.chunkId)) continue;
    const loaded = Object.hasOwn(source.loaded, c.chunkId) ? source.loaded[c.chunkId] : undefined;
    if (loaded === c.html) out.add(c.chunkId);
  }
  return out;
}

/** The text shape of an original: its encoding (as decoded on load) and its line ending. */
export interface TextShape {
  encoding: string;
  eol: "\n" | "\r\n";
}

/** Encoding and dominant line ending of a text original. */
export function textShape(bytes: Uint8Array): TextShape {
  const { text, encoding } = decodeText(bytes);
  const crlf = text.match(/\r\n/g)?.length ?? 0;
  const lf = (text.match(/\n/g)?.length ?? 0) - crlf;
  return { encoding, eol: crlf > lf ? "\r\n" : "\n" };
}

type ByteSpan = Extract<SourceSpan, { kind: "bytes" }>;

const sameSpan = (a: ByteSpan | undefined, b: ByteSpan) => a !== undefined && a.start === b.start && a.end === b.end;

/**
 * The file for `chunks` written into `source` (markdown or txt, byte spans): untouched chunks
 * (untouchedChunks) are their original bytes; others are `render(html)` (LF line ends; turned
 * into the original's line ending and encoding). Between two source chunks in their original
 * order the original's bytes between them are kept (up to the next source block when the ones
 * between were deleted); around new or moved chunks a blank line. The bytes before the first
 * and after the last block (BOM, front matter, final newline) are kept.
 * Returns null when no chunk of the document comes from the original (the caller generates).
 * `warnings` gets a line when characters could not be written in the original's encoding.
 */
export function spliceText(
  chunks: ChunkRecord[],
  source: DocumentSource,
  render: (html: string) => string,
  warnings: string[],
): Buffer | null {
  const bytes = Buffer.from(source.bytes.buffer, source.bytes.byteOffset, source.bytes.byteLength);
  const spanOf = (id: string): ByteSpan | undefined => {
    const span = Object.hasOwn(source.map.chunks, id) ? source.map.chunks[id] : undefined;
    return span?.kind === "bytes" ? span : undefined;
  };
  if (!chunks.some((c) => spanOf(c.chunkId))) return null;
  const shape = textShape(bytes);
  const untouched = untouchedChunks(chunks, source);
  // Chunks of one block share its span: a group written back whole or re-serialized whole.
  const groupSize = new Map<string, number>();
  const starts: number[] = [];
  let firstStart = Number.POSITIVE_INFINITY;
  let lastEnd = 0;
  for (const span of Object.values(source.map.chunks)) {
    if (span.kind !== "bytes") continue;
    const key = `${span.start}:${span.end}`;
    if (!groupSize.has(key)) starts.push(span.start);
    groupSize.set(key, (groupSize.get(key) ?? 0) + 1);
    firstStart = Math.min(firstStart, span.start);
    lastEnd = Math.max(lastEnd, span.end);
  }
  starts.sort((a, b) => a - b);
  const nextStart = (from: number) => {
    let lo = 0;
    let hi = starts.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (starts[mid] < from) lo = mid + 1;
      else hi = mid;
    }
    return lo < starts.length ? starts[lo] : lastEnd;
  };
  let unencodable = false;
  const encode = (text: string): Buffer => {
    const withEol = shape.eol === "\n" ? text : text.replace(/\n/g, "\r\n");
    const out = iconv.encode(withEol, shape.encoding);
    if (!unencodable && iconv.decode(out, shape.encoding) !== withEol) unencodable = true;
    return out;
  };
  const blankLine = encode("\n\n");

  const out: Buffer[] = [bytes.subarray(0, firstStart)];
  let prev: ByteSpan | null = null;
  let first = true;
  for (let i = 0; i < chunks.length; ) {
    const span = spanOf(chunks[i].chunkId);
    let j = i + 1;
    if (span) while (j < chunks.length && sameSpan(spanOf(chunks[j].chunkId), span)) j++;
    const run = chunks.slice(i, j);
    if (!first)
      out.push(prev && span && span.start >= prev.end ? bytes.subarray(prev.end, nextStart(prev.end)) : blankLine);
    first = false;
    const whole = span && run.length === groupSize.get(`${span.start}:${span.end}`);
    if (span && whole && run.every((c) => untouched.has(c.chunkId))) out.push(bytes.subarray(span.start, span.end));
    else
      out.push(
        encode(
          run
            .map((c) => render(c.html).replace(/\s+$/, ""))
            .filter(Boolean)
            .join("\n\n"),
        ),
      );
    prev = span ?? null;
    i = j;
  }
  out.push(bytes.subarray(lastEnd));
  if (unencodable)
    warnings.push(
      `Some characters have no ${shape.encoding} equivalent and were written as "?", as in the original's encoding`,
    );
  return Buffer.concat(out);
}
