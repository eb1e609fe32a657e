// A chat turn's writes on a real database: the agent's chunks checked and stored, the edits on
// top as a second version, the checkpoint answered, idempotent loads, and all or nothing.
import { type ChunkOperation, type ChunkRecord, chunkHtml } from "@redline/html-chunks";
import { InputError, NotFoundError } from "@redline/service-kit";
import { afterAll, describe, expect, it } from "vitest";
import { TABLES } from "../db/tables.js";
import { migratedTestDb } from "../db/test-db.js";
import { commitOperations } from "./commit.js";
import { createDocument, validateLoadChunks } from "./load.js";
import { getDocument } from "./read.js";
import { commitTurn, type TurnInput } from "./turn.js";

const OWNER = "owner_turn";
const USER = { kind: "user" as const, name: "Ada" };
const db = await migratedTestDb("unit_documents_turn");
afterAll(() => db.destroy());

const p = (id: string, text: string) => `<p data-chunk-id="${id}">${text}</p>`;
const chunksOf = (html: string, parts: "keep" | "drop" = "drop") => chunkHtml(html, { parts }).chunks;
const LOAD = chunksOf(`<h1 data-chunk-id="c_t">Report</h1>${p("c_a", "Alpha")}${p("c_b", "Beta")}`);
const replaceA: ChunkOperation = {
  kind: "replace",
  chunkId: "c_a",
  html: p("c_a", "Alpha, edited"),
  explanation: "ai",
};

function turn(input: Partial<TurnInput>): ReturnType<typeof commitTurn> {
  return commitTurn(db, OWNER, {
    documentId: "",
    sessionId: "s1",
    baseVersionId: "",
    operations: [],
    summary: "turn",
    author: USER,
    ...input,
  });
}

async function versionsOf(documentId: string) {
  return db(TABLES.versions).where({ document_id: documentId }).orderBy("seq");
}

describe("validateLoadChunks", () => {
  it("returns the agent's chunkHtml output unchanged, part marks only with keepParts", () => {
    expect(validateLoadChunks(LOAD)).toEqual(LOAD);
    const header = chunksOf(`<p data-chunk-id="c_h" data-part="header">Head</p>${p("c_x", "x")}`, "keep");
    expect(validateLoadChunks(header, true)).toEqual(header);
    expect(validateLoadChunks(header)[0].html).toBe('<p data-chunk-id="c_h">Head</p>');
  });

  it("stores HTML as the sanitizer makes it", () => {
    const [stored] = validateLoadChunks([{ chunkId: "c_s", html: '<p data-chunk-id="c_s" onclick="x()">Hi</p>' }]);
    expect(stored).toEqual({ chunkId: "c_s", html: '<p data-chunk-id="c_s">Hi</p>' });
  });

  it.each<[string, ChunkRecord[]]>([
    ["an invalid id", [{ chunkId: "bad id", html: '<p data-chunk-id="bad id">x</p>' }]],
    ["a duplicate id", [...LOAD, { chunkId: "c_a", html: p("c_a", "again") }]],
    ["two blocks in one chunk", [{ chunkId: "c_1", html: `${p("c_1", "a")}${p("c_2", "b")}` }]],
    ["a chunk id its HTML does not carry", [{ chunkId: "c_1", html: p("c_9", "a") }]],
    ["a block left open over the next chunk", [{ chunkId: "c_1", html: '<div data-chunk-id="c_1">a' }, ...LOAD]],
    ["an inline tag left open over the next chunk", [{ chunkId: "c_1", html: '<p data-chunk-id="c_1"><b>a' }, ...LOAD]],
    ["inline content", [{ chunkId: "c_1", html: "just text" }]],
  ])("refuses %s (invalid_chunk)", (_, chunks) => {
    expect(() => validateLoadChunks(chunks)).toThrow(InputError);
    try {
      validateLoadChunks(chunks);
    } catch (err) {
      expect((err as InputError).body).toMatchObject({ code: "invalid_chunk" });
    }
  });
});

describe("commitTurn", () => {
  it("creates a document from the chunks and commits the edits on it as a second version by the AI", async () => {
    const result = await turn({ load: { chunks: LOAD, pageSetup: { size: "A4" } }, operations: [replaceA] });
    expect(result.previousVersionId).toBe("");
    expect(result.row).toMatchObject({ title: "Report", head_seq: 2, chunk_count: 3, page_setup: { size: "A4" } });
    expect(result.commit?.changes.map((c) => c.chunkId)).toEqual(["c_a"]);
    const [create, edit] = await versionsOf(result.row.id);
    expect(create).toMatchObject({ id: result.loadedVersionId, kind: "create", author: "Ada", author_kind: "user" });
    expect(edit).toMatchObject({ kind: "edit", parent_id: create.id, author_kind: "ai", writer: "chat" });
    const head = await getDocument(db, OWNER, { documentId: result.row.id, includeChunks: true });
    expect(head.chunks.map((c) => c.html)).toEqual([LOAD[0].html, replaceA.html, LOAD[2].html]);
  });

  it("replaces a stored document and answers the head it replaced (the checkpoint)", async () => {
    const doc = await createDocument(db, OWNER, { html: p("c_old", "Old"), sessionId: "s0" });
    const result = await turn({ documentId: doc.row.id, load: { chunks: LOAD, title: "" }, operations: [replaceA] });
    expect(result.previousVersionId).toBe(doc.versionId);
    const [, replace, edit] = await versionsOf(doc.row.id);
    expect(replace).toMatchObject({ id: result.loadedVersionId, kind: "replace", parent_id: doc.versionId });
    expect(edit).toMatchObject({ kind: "edit", parent_id: replace.id, author_kind: "ai" });
    expect(result.row.title).toBe(doc.row.title);
  });

  it("stores a load alone, and commits operations alone on their base", async () => {
    const loaded = await turn({ load: { chunks: LOAD } });
    expect(loaded.commit).toBeUndefined();
    expect(loaded.row.head_version_id).toBe(loaded.loadedVersionId);
    const edited = await turn({
      documentId: loaded.row.id,
      baseVersionId: loaded.loadedVersionId,
      operations: [replaceA],
    });
    expect(edited.previousVersionId).toBe(loaded.loadedVersionId);
    expect(edited.loadedVersionId).toBe("");
    expect(edited.row.head_seq).toBe(2);
  });

  it("merges edits around another session's commit and reads head only when asked", async () => {
    const loaded = await turn({ load: { chunks: LOAD } });
    const other = await commitOperations(db, OWNER, {
      documentId: loaded.row.id,
      baseVersionId: loaded.loadedVersionId,
      sessionId: "s2",
      operations: [{ kind: "replace", chunkId: "c_b", html: p("c_b", "Beta by s2"), explanation: "" }],
      summary: "other",
      returnChunks: false,
    });
    const input = { documentId: loaded.row.id, baseVersionId: loaded.loadedVersionId, operations: [replaceA] };
    const merged = await turn({ ...input, returnChunksWhenMerged: true });
    expect(merged.commit).toMatchObject({ merged: true, mergedChunkIds: ["c_b"] });
    expect(merged.previousVersionId).toBe(other.row.head_version_id);
    expect(merged.commit?.chunks.map((c) => c.html)).toEqual([LOAD[0].html, replaceA.html, p("c_b", "Beta by s2")]);
    const again = await turn({ ...input, operations: [{ ...replaceA, html: p("c_a", "third") }] });
    expect(again.commit?.merged).toBe(true);
    expect(again.commit?.chunks).toEqual([]);
  });

  it("replays a keyed load and a keyed commit: a rerun writes nothing twice", async () => {
    const doc = await createDocument(db, OWNER, { html: p("c_old", "Old"), sessionId: "s0" });
    const keyed = { load: { chunks: LOAD, idempotencyKey: "job:1:load" }, idempotencyKey: "job:1" };
    const first = await turn({ documentId: doc.row.id, ...keyed, operations: [replaceA] });
    const rerun = await turn({ documentId: doc.row.id, ...keyed, operations: [replaceA] });
    expect(rerun).toMatchObject({ loadReplayed: true, loadedVersionId: first.loadedVersionId, wrote: false });
    expect(rerun.previousVersionId).toBe(doc.versionId);
    expect(rerun.commit?.replayed).toBe(true);
    expect(await versionsOf(doc.row.id)).toHaveLength(3);
    const created = await turn({ ...keyed, operations: [replaceA] });
    const recreated = await turn({ ...keyed, operations: [replaceA] });
    expect(recreated.row.id).toBe(created.row.id);
    expect(recreated).toMatchObject({ loadReplayed: true, wrote: false });
    expect(await versionsOf(created.row.id)).toHaveLength(2);
  });

  it("writes nothing when the edits are refused, nor for chunks that are not what the sanitizer makes", async () => {
    const doc = await createDocument(db, OWNER, { html: p("c_old", "Old"), sessionId: "s0" });
    const unknown: ChunkOperation = { kind: "delete", chunkId: "c_missing", explanation: "" };
    await expect(turn({ documentId: doc.row.id, load: { chunks: LOAD }, operations: [unknown] })).rejects.toThrow(
      /operation 0/,
    );
    const twoBlocks = [{ chunkId: "c_1", html: `${p("c_1", "a")}${p("c_2", "b")}` }];
    await expect(turn({ documentId: doc.row.id, load: { chunks: twoBlocks } })).rejects.toBeInstanceOf(InputError);
    expect(await versionsOf(doc.row.id)).toHaveLength(1);
    await expect(
      turn({ documentId: "00000000-0000-4000-8000-000000000000", load: { chunks: LOAD } }),
    ).rejects.toBeInstanceOf(NotFoundError);
    await expect(turn({ operations: [replaceA] })).rejects.toBeInstanceOf(InputError);
  });
});
