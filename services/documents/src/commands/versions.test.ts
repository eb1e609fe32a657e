// Version history on a real database: paging newest first, owner scoping, chunks_changed, HTML.
import type { ChunkOperation } from "@redline/html-chunks";
import { NotFoundError } from "@redline/service-kit";
import { afterAll, describe, expect, it } from "vitest";
import { migratedTestDb } from "../db/test-db.js";
import { commitOperations } from "./commit.js";
import { archiveDocument } from "./library.js";
import { createDocument, replaceDocument } from "./load.js";
import { chunkChangesSince, getVersion, listVersions } from "./versions.js";

const OWNER = "owner_versions";
const db = await migratedTestDb("unit_documents_versions");
afterAll(() => db.destroy());

const p = (id: string, text: string) => `<p data-chunk-id="${id}">${text}</p>`;
const V1 = [p("c_a", "A"), p("c_b", "B"), p("c_c", "C")].join("");

async function history() {
  const doc = await createDocument(db, OWNER, { html: V1, sessionId: "s1" });
  const commit = (operations: ChunkOperation[], summary: string) =>
    commitOperations(db, OWNER, {
      documentId: doc.row.id,
      baseVersionId: "",
      sessionId: "s2",
      operations,
      summary,
      returnChunks: false,
    });
  // v2: one edit; v3: an insert and a delete; v4: a move (delete + insert of one chunk) and an edit.
  await commit([{ kind: "replace", chunkId: "c_a", html: p("c_a", "A2"), explanation: "" }], "edit a");
  await commit(
    [
      { kind: "insert", chunkId: "c_n", afterChunkId: "c_b", html: p("c_n", "N"), explanation: "" },
      { kind: "delete", chunkId: "c_c", explanation: "" },
    ],
    "",
  );
  await commit(
    [
      { kind: "delete", chunkId: "c_a", explanation: "" },
      { kind: "insert", chunkId: "c_a", afterChunkId: "c_n", html: p("c_a", "A3"), explanation: "" },
      { kind: "replace", chunkId: "c_b", html: p("c_b", "B2"), explanation: "" },
    ],
    "move a",
  );
  // v5: content replaced verbatim (c_b kept as is, c_n changed, c_a gone).
  await replaceDocument(db, OWNER, { documentId: doc.row.id, html: p("c_b", "B2") + p("c_n", "N2"), sessionId: "" });
  return doc;
}

describe("listVersions", () => {
  it("lists versions newest first with kind, session, summary and the chunks each changed", async () => {
    const doc = await history();
    const { versions, total } = await listVersions(db, OWNER, { documentId: doc.row.id, limit: 0, offset: 0 });
    expect(total).toBe(5);
    expect(versions.map((v) => [v.row.seq, v.row.kind, v.chunksChanged, v.row.summary])).toEqual([
      [5, "replace", 2, "content replaced"],
      [4, "edit", 2, "move a"],
      [3, "edit", 2, ""],
      [2, "edit", 1, "edit a"],
      [1, "create", 3, "created"],
    ]);
    expect(versions[4].row.session_id).toBe("s1");
    expect(versions[0].row.session_id).toBe("");
  });

  it("pages with limit and offset, clamping the limit", async () => {
    const doc = await history();
    const page = await listVersions(db, OWNER, { documentId: doc.row.id, limit: 2, offset: 1 });
    expect(page.versions.map((v) => v.row.seq)).toEqual([4, 3]);
    expect(page.total).toBe(5);
    const past = await listVersions(db, OWNER, { documentId: doc.row.id, limit: 10, offset: 10 });
    expect(past).toEqual({ versions: [], total: 5 });
    const clamped = await listVersions(db, OWNER, { documentId: doc.row.id, limit: 1000, offset: -3 });
    expect(clamped.versions).toHaveLength(5);
  });

  it("is owner-scoped and lists archived documents", async () => {
    const doc = await history();
    await expect(listVersions(db, "intruder", { documentId: doc.row.id, limit: 0, offset: 0 })).rejects.toThrow(
      NotFoundError,
    );
    await expect(listVersions(db, OWNER, { documentId: "not-a-uuid", limit: 0, offset: 0 })).rejects.toThrow(
      /Document not found/,
    );
    await archiveDocument(db, OWNER, { documentId: doc.row.id, sessionId: "" });
    expect((await listVersions(db, OWNER, { documentId: doc.row.id, limit: 0, offset: 0 })).total).toBe(5);
  });
});

describe("getVersion", () => {
  it("returns one version, with that version's HTML when asked", async () => {
    const doc = await history();
    const { versions } = await listVersions(db, OWNER, { documentId: doc.row.id, limit: 0, offset: 0 });
    const v3 = versions[2].row;
    const plain = await getVersion(db, OWNER, { documentId: doc.row.id, versionId: v3.id, includeHtml: false });
    expect(plain.html).toBe("");
    expect(plain.version).toEqual(versions[2]);
    const withHtml = await getVersion(db, OWNER, { documentId: doc.row.id, versionId: v3.id, includeHtml: true });
    expect(withHtml.html).toBe([p("c_a", "A2"), p("c_b", "B"), p("c_n", "N")].join("\n"));
    const first = await getVersion(db, OWNER, { documentId: doc.row.id, versionId: doc.versionId, includeHtml: true });
    expect(first.html).toBe([p("c_a", "A"), p("c_b", "B"), p("c_c", "C")].join("\n"));
    expect(first.version.chunksChanged).toBe(3);
  });

  it("names the document or the version that is not found", async () => {
    const doc = await history();
    const other = await createDocument(db, OWNER, { html: V1, sessionId: "" });
    const ask = (owner: string, documentId: string, versionId: string) =>
      getVersion(db, owner, { documentId, versionId, includeHtml: true });
    await expect(ask("intruder", doc.row.id, doc.versionId)).rejects.toThrow(/Document not found/);
    await expect(ask(OWNER, doc.row.id, other.versionId)).rejects.toThrow(/Version not found/);
    await expect(ask(OWNER, doc.row.id, "v-1")).rejects.toThrow(/Version not found/);
  });
});

describe("chunkChangesSince", () => {
  it("lists modified, inserted and deleted chunks with the author and date of the version that last touched each", async () => {
    const ada = { kind: "user" as const, name: "Ada" };
    const doc = await createDocument(db, OWNER, { html: V1, sessionId: "s1", author: ada });
    const commit = (operations: ChunkOperation[], author: { kind: "ai" | "user"; name: string }) =>
      commitOperations(db, OWNER, {
        documentId: doc.row.id,
        baseVersionId: "",
        sessionId: "s2",
        operations,
        summary: "",
        returnChunks: false,
        author,
      });
    const ai = { kind: "ai" as const, name: "Redline AI" };
    // v2 (AI): edit a, delete b; v3 (Ada): insert n after a, edit a again.
    await commit(
      [
        { kind: "replace", chunkId: "c_a", html: p("c_a", "A2"), explanation: "" },
        { kind: "delete", chunkId: "c_b", explanation: "" },
      ],
      ai,
    );
    await commit(
      [
        { kind: "insert", chunkId: "c_n", afterChunkId: "c_a", html: p("c_n", "N"), explanation: "" },
        { kind: "replace", chunkId: "c_c", html: p("c_c", "C2"), explanation: "" },
      ],
      ada,
    );
    const all = await chunkChangesSince(db, OWNER, { documentId: doc.row.id, sinceSeq: 0 });
    expect(all.sinceSeq).toBe(1);
    expect(all.headSeq).toBe(3);
    expect(all.changes.map((c) => [c.chunkId, c.kind, c.seq, c.author, c.baseHtml !== "", c.afterChunkId])).toEqual([
      ["c_a", "modified", 2, "Redline AI", true, ""],
      ["c_n", "inserted", 3, "Ada", false, ""],
      ["c_c", "modified", 3, "Ada", true, ""],
      ["c_b", "deleted", 2, "Redline AI", true, "c_a"],
    ]);
    expect(all.changes.every((c) => c.date instanceof Date && !Number.isNaN(c.date.getTime()))).toBe(true);
    const { versions } = await listVersions(db, OWNER, { documentId: doc.row.id, limit: 0, offset: 0 });
    expect(versions.map((v) => [v.row.seq, v.row.author, v.row.author_kind])).toEqual([
      [3, "Ada", "user"],
      [2, "Redline AI", "ai"],
      [1, "Ada", "user"],
    ]);
    const late = await chunkChangesSince(db, OWNER, { documentId: doc.row.id, sinceSeq: 2 });
    expect(late.changes.map((c) => c.chunkId)).toEqual(["c_n", "c_c"]);
    expect((await chunkChangesSince(db, OWNER, { documentId: doc.row.id, sinceSeq: 3 })).changes).toEqual([]);
    for (const sinceSeq of [4, -1]) {
      await expect(chunkChangesSince(db, OWNER, { documentId: doc.row.id, sinceSeq })).rejects.toMatchObject({
        httpStatus: 422,
      });
    }
    await expect(chunkChangesSince(db, "someone_else", { documentId: doc.row.id, sinceSeq: 1 })).rejects.toBeInstanceOf(
      NotFoundError,
    );
  });
});
