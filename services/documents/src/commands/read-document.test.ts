// ReadDocument on a real database: outline pages, headings with section sizes, a section, chunks
// by id within the budget, a table's rows by range, and the 422s that name the field.
import { NotFoundError, SchemaError } from "@redline/service-kit";
import { afterAll, describe, expect, it } from "vitest";
import { migratedTestDb } from "../db/test-db.js";
import { createDocument } from "./load.js";
import { READ_BUDGET_BYTES, readDocument } from "./read-document.js";

const OWNER = "owner_read_document";
const db = await migratedTestDb("unit_documents_read_document");
afterAll(() => db.destroy());

const HTML = [
  '<h1 data-chunk-id="c_h1">Agreement</h1>',
  '<p data-chunk-id="c_p1">Acme pays.</p>',
  '<h2 data-chunk-id="c_h2">Pricing</h2>',
  '<table data-chunk-id="c_t1"><tr><th>Plan</th></tr><tr><td>Free</td></tr><tr><td>Pro</td></tr></table>',
  '<h2 data-chunk-id="c_h3">Term</h2>',
  '<table data-chunk-id="c_t2"><tr><td>1 year</td></tr></table>',
].join("");

/** The 422 issue's field of a failed read. */
async function fieldOf(read: Promise<unknown>): Promise<unknown> {
  const err = await read.catch((e: unknown) => e);
  expect(err).toBeInstanceOf(SchemaError);
  return ((err as SchemaError).detail as { loc: unknown[] }[])[0].loc[1];
}

const documentId = (await createDocument(db, OWNER, { html: HTML, sessionId: "s1" })).row.id;

describe("readDocument", () => {
  it("pages the outline and lists headings with their section sizes", async () => {
    const first = await readDocument(db, OWNER, { documentId, kind: "outline", limit: 4 });
    expect(first.chunkCount).toBe(6);
    expect(first.outline.map((e) => e.chunkId)).toEqual(["c_h1", "c_p1", "c_h2", "c_t1"]);
    expect(first.outline[2]).toMatchObject({ tag: "h2", level: 2, preview: "Pricing" });
    expect(first.nextFromChunkId).toBe("c_h3");
    const next = await readDocument(db, OWNER, { documentId, kind: "outline", fromChunkId: first.nextFromChunkId });
    expect(next.outline.map((e) => e.chunkId)).toEqual(["c_h3", "c_t2"]);
    expect(next.nextFromChunkId).toBe("");
    const headings = await readDocument(db, OWNER, { documentId, kind: "outline", headingsOnly: true });
    expect(headings.outline.map((e) => [e.chunkId, e.sectionChunks])).toEqual([
      ["c_h1", 6],
      ["c_h2", 2],
      ["c_h3", 2],
    ]);
  });

  it("reads a section, chunks by id (unknown ones listed) and a table's rows by range", async () => {
    const section = await readDocument(db, OWNER, { documentId, kind: "section", chunkIds: ["c_h2"] });
    expect(section.chunks.map((c) => c.chunkId)).toEqual(["c_h2", "c_t1"]);
    const chunks = await readDocument(db, OWNER, { documentId, kind: "chunks", chunkIds: ["c_t2", "c_p1", "zz"] });
    expect(chunks.chunks.map((c) => c.chunkId)).toEqual(["c_t2", "c_p1"]);
    expect(chunks.unknownChunkIds).toEqual(["zz"]);
    const rows = await readDocument(db, OWNER, { documentId, kind: "table_rows", tableNumber: 1, rowOffset: 1 });
    expect(rows).toMatchObject({ tableChunkId: "c_t1", rowCount: 3 });
    expect(rows.rows).toEqual(["<tr><td>Free</td></tr>", "<tr><td>Pro</td></tr>"]);
    const second = await readDocument(db, OWNER, { documentId, kind: "table_rows", chunkIds: ["c_t2"], rowLimit: 1 });
    expect(second).toMatchObject({ tableChunkId: "c_t2", rowCount: 1, rows: ["<tr><td>1 year</td></tr>"] });
  });

  it("stops sections and chunks at the read budget and lists what it left out", async () => {
    const big = "x".repeat(READ_BUDGET_BYTES - 100);
    const large = await createDocument(db, OWNER, {
      html: `<h1 data-chunk-id="c_a">A</h1><p data-chunk-id="c_b">${big}</p><p data-chunk-id="c_c">${big}</p>`,
      sessionId: "s1",
    });
    const res = await readDocument(db, OWNER, { documentId: large.row.id, kind: "section", chunkIds: ["c_a"] });
    expect(res.chunks.map((c) => c.chunkId)).toEqual(["c_a", "c_b"]);
    expect(res.leftOutChunkIds).toEqual(["c_c"]);
  });

  it("names the field of a bad read, and hides another owner's document", async () => {
    expect(await fieldOf(readDocument(db, OWNER, { documentId, kind: "section", chunkIds: ["c_p1"] }))).toBe(
      "chunk_ids",
    );
    expect(await fieldOf(readDocument(db, OWNER, { documentId, kind: "chunks", chunkIds: ["nope"] }))).toBe(
      "chunk_ids",
    );
    expect(await fieldOf(readDocument(db, OWNER, { documentId, kind: "outline", fromChunkId: "nope" }))).toBe(
      "from_chunk_id",
    );
    expect(await fieldOf(readDocument(db, OWNER, { documentId, kind: "table_rows", tableNumber: 3 }))).toBe(
      "table_number",
    );
    expect(await fieldOf(readDocument(db, OWNER, { documentId, kind: "table_rows", chunkIds: ["c_p1"] }))).toBe(
      "chunk_ids",
    );
    await expect(readDocument(db, "someone_else", { documentId, kind: "outline" })).rejects.toBeInstanceOf(
      NotFoundError,
    );
  });
});
