// ReadDocument: one read of a document at head as the agent's reading tools see it (outline page,
// a section, chunks, a table's rows), for readers outside a chat turn (the gateway's MCP tools).
// The chunk model's own functions (outline, sectionSpan, tableRows) do the work, so a reader and
// the agent agree on what a section or a chunk is.
import {
  ChunkError,
  type ChunkRecord,
  hasTable,
  type OutlineEntry,
  outline,
  sectionSpan,
  tableRows,
} from "@redline/html-chunks";
import { type Knex, SchemaError } from "@redline/service-kit";
import { getDocument } from "./read.js";

/** Read budget of sections and chunks (bytes of HTML), as the agent's read_chunks has. */
export const READ_BUDGET_BYTES = 200_000;
const OUTLINE_DEFAULT = 200;
const OUTLINE_MAX = 1000;
const ROWS_DEFAULT = 50;
const ROWS_MAX = 500;
const PREVIEW_CHARS = 80;

/** What to read (documents.v1.ReadMode without its proto prefix). */
export type ReadKind = "outline" | "section" | "chunks" | "table_rows";

/** A ReadDocument request in the command's terms. */
export interface ReadInput {
  documentId: string;
  kind: ReadKind;
  headingsOnly?: boolean;
  fromChunkId?: string;
  limit?: number;
  chunkIds?: string[];
  tableNumber?: number;
  rowOffset?: number;
  rowLimit?: number;
}

/** What a read returns; only the fields of its kind are filled. */
export interface ReadResult {
  versionId: string;
  chunkCount: number;
  outline: (OutlineEntry & { sectionChunks: number })[];
  nextFromChunkId: string;
  chunks: ChunkRecord[];
  leftOutChunkIds: string[];
  unknownChunkIds: string[];
  tableChunkId: string;
  rows: string[];
  rowCount: number;
}

/** A 422 naming the request field, as the gateway's validation names a body field. */
function invalid(field: string, msg: string): never {
  throw new SchemaError([{ type: "value_error", loc: ["body", field], msg }]);
}

/**
 * Reads the owner's document at head. NotFoundError (404) when it is not the owner's; SchemaError
 * (422) naming the field for an unknown from_chunk_id, a section id that is not a heading, no
 * chunk id known, or a table that does not exist. Sections and chunks stop at READ_BUDGET_BYTES
 * (the first chunk is always returned); the ids past it are listed in leftOutChunkIds.
 */
export async function readDocument(db: Knex, ownerId: string, input: ReadInput): Promise<ReadResult> {
  const view = await getDocument(db, ownerId, { documentId: input.documentId, includeChunks: true });
  const chunks = view.chunks;
  const result: ReadResult = {
    versionId: view.versionId,
    chunkCount: chunks.length,
    outline: [],
    nextFromChunkId: "",
    chunks: [],
    leftOutChunkIds: [],
    unknownChunkIds: [],
    tableChunkId: "",
    rows: [],
    rowCount: 0,
  };
  switch (input.kind) {
    case "outline":
      return { ...result, ...outlinePage(chunks, input) };
    case "section": {
      const heading = input.chunkIds?.[0];
      if (!heading) invalid("chunk_ids", "name the section's heading chunk id");
      let span: string[];
      try {
        span = sectionSpan(chunks, heading);
      } catch (err) {
        if (err instanceof ChunkError) invalid("chunk_ids", err.message);
        throw err;
      }
      return { ...result, ...withinBudget(pick(chunks, span)) };
    }
    case "chunks": {
      const asked = [...new Set(input.chunkIds ?? [])];
      if (asked.length === 0) invalid("chunk_ids", "name at least one chunk id");
      const byId = new Map(chunks.map((c) => [c.chunkId, c]));
      const unknown = asked.filter((id) => !byId.has(id));
      if (unknown.length === asked.length) invalid("chunk_ids", `no such chunk id: ${unknown.join(", ")}`);
      const known = asked.flatMap((id) => byId.get(id) ?? []);
      return { ...result, ...withinBudget(known), unknownChunkIds: unknown };
    }
    case "table_rows":
      return { ...result, ...rowsOf(chunks, input) };
  }
}

/** One page of the outline from `fromChunkId`; with headingsOnly, headings and their section sizes. */
function outlinePage(chunks: ChunkRecord[], input: ReadInput): Pick<ReadResult, "outline" | "nextFromChunkId"> {
  const limit = clamp(input.limit || OUTLINE_DEFAULT, 1, OUTLINE_MAX);
  let entries = outline(chunks, { previewChars: PREVIEW_CHARS }).map((e) => ({ ...e, sectionChunks: 0 }));
  if (input.headingsOnly) {
    entries = entries
      .filter((e) => e.level > 0)
      .map((e) => ({ ...e, sectionChunks: sectionSpan(chunks, e.chunkId).length }));
  }
  let start = 0;
  if (input.fromChunkId) {
    start = entries.findIndex((e) => e.chunkId === input.fromChunkId);
    if (start < 0) invalid("from_chunk_id", `"${input.fromChunkId}" is not in this listing`);
  }
  const page = entries.slice(start, start + limit);
  return { outline: page, nextFromChunkId: entries[start + limit]?.chunkId ?? "" };
}

/** `ids`' chunks in document order. */
function pick(chunks: ChunkRecord[], ids: string[]): ChunkRecord[] {
  const wanted = new Set(ids);
  return chunks.filter((c) => wanted.has(c.chunkId));
}

/** A prefix of `chunks` within READ_BUDGET_BYTES (at least one), and the ids left out. */
function withinBudget(chunks: ChunkRecord[]): Pick<ReadResult, "chunks" | "leftOutChunkIds"> {
  let bytes = 0;
  let cut = chunks.length;
  for (let i = 0; i < chunks.length; i++) {
    bytes += Buffer.byteLength(chunks[i].html);
    if (i > 0 && bytes > READ_BUDGET_BYTES) {
      cut = i;
      break;
    }
  }
  return { chunks: chunks.slice(0, cut), leftOutChunkIds: chunks.slice(cut).map((c) => c.chunkId) };
}

/** A range of the rows of the table named by chunk id, else by its number among the document's tables. */
function rowsOf(chunks: ChunkRecord[], input: ReadInput): Pick<ReadResult, "tableChunkId" | "rows" | "rowCount"> {
  const tables = chunks.filter((c) => hasTable(c.html));
  let table: ChunkRecord | undefined;
  if (input.chunkIds && input.chunkIds.length > 0) {
    if (input.chunkIds.length > 1) invalid("chunk_ids", "name one table chunk");
    table = chunks.find((c) => c.chunkId === input.chunkIds?.[0]);
    if (!table) invalid("chunk_ids", `no such chunk id: ${input.chunkIds[0]}`);
    if (!hasTable(table.html)) invalid("chunk_ids", `chunk "${table.chunkId}" holds no table`);
  } else {
    const n = input.tableNumber ?? 0;
    if (n < 1) invalid("table_number", "name the table: its chunk id, or its number (1 = the first table)");
    table = tables[n - 1];
    if (!table) invalid("table_number", `the document has ${tables.length} table(s), not ${n}`);
  }
  const all = tableRows(table.html);
  const offset = Math.max(0, input.rowOffset ?? 0);
  const limit = clamp(input.rowLimit || ROWS_DEFAULT, 1, ROWS_MAX);
  return { tableChunkId: table.chunkId, rows: all.slice(offset, offset + limit), rowCount: all.length };
}

function clamp(n: number, lo: number, hi: number): number {
  return Math.min(hi, Math.max(lo, Math.trunc(n)));
}
