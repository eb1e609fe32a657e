// Version restore and diff on a real database: a restore is a new version equal to the old one
// (part marks included) with its outbox event, a no-op when head has that content already, and
// refused for archived or foreign documents; a diff lists the chunks that differ, with stable ids.
import { ConflictError, NotFoundError } from "@redline/service-kit";
import { afterAll, describe, expect, it } from "vitest";
import { eventsAfter } from "../db/store/outbox.js";
import { chunkRecordsAt } from "../db/store/revisions.js";
import { migratedTestDb } from "../db/test-db.js";
import { commitOperations } from "./commit.js";
import { archiveDocument } from "./library.js";
import { createDocument } from "./load.js";
import { restoreVersion } from "./restore.js";
import { diffVersions, listVersions } from "./versions.js";

const OWNER = "owner_restore";
const db = await migratedTestDb("unit_documents_restore");
afterAll(() => db.destroy());

const p = (id: string, text: string) => `<p data-chunk-id="${id}">${text}</p>`;
const HEADER = '<p data-chunk-id="c_h" data-part="header">Confidential</p>';
const V1 = [HEADER, p("c_a", "A"), p("c_b", "B"), p("c_c", "C")].join("");

/** v1 (with a header part); v2 edits c_a, deletes c_c and inserts c_n after c_b. */
async function twoVersions() {
  const doc = await createDocument(db, OWNER, { html: V1, sessionId: "s1", keepParts: true });
  await commitOperations(db, OWNER, {
    documentId: doc.row.id,
    baseVersionId: "",
    sessionId: "s2",
    operations: [
      { kind: "replace", chunkId: "c_a", html: p("c_a", "A2"), explanation: "" },
      { kind: "delete", chunkId: "c_c", explanation: "" },
      { kind: "insert", chunkId: "c_n", afterChunkId: "c_b", html: p("c_n", "N"), explanation: "" },
    ],
    summary: "v2",
    returnChunks: false,
  });
  const { versions } = await listVersions(db, OWNER, { documentId: doc.row.id, limit: 0, offset: 0 });
  const [v2, v1] = versions.map((v) => v.row.id);
  return { id: doc.row.id, v1, v2 };
}

describe("restoreVersion", () => {
  it("writes a new version equal to the old one, header part included, with a restore event", async () => {
    const doc = await twoVersions();
    const before = await chunkRecordsAt(db, doc.id, 1);
    const res = await restoreVersion(db, OWNER, { documentId: doc.id, versionId: doc.v1, sessionId: "s3" });
    expect(res.restored).toBe(true);
    expect(res.version.row).toMatchObject({ seq: 3, kind: "restore", summary: "restored from version 1" });
    expect(res.version.row.id).toBe(res.row.head_version_id);
    expect(res.changedChunkIds.sort()).toEqual(["c_a", "c_c", "c_n"]);
    expect(res.version.chunksChanged).toBe(3);
    expect(await chunkRecordsAt(db, doc.id)).toEqual(before);
    expect((await chunkRecordsAt(db, doc.id))[0].html).toContain('data-part="header"');
    expect(res.row.chunk_count).toBe(4);

    const events = await eventsAfter(db, OWNER, {
      documentIds: [doc.id],
      afterId: 0,
      excludeSessionId: "",
      types: ["document_updated"],
      limit: 10,
    });
    expect(events.at(-1)).toMatchObject({
      version_id: res.version.row.id,
      session_id: "s3",
      payload: { kind: "restore", restored_from: doc.v1, summary: "restored from version 1" },
    });
  });

  it("writes nothing when head already has the version's content", async () => {
    const doc = await twoVersions();
    const head = await restoreVersion(db, OWNER, { documentId: doc.id, versionId: doc.v2, sessionId: "" });
    expect(head).toMatchObject({ restored: false, changedChunkIds: [] });
    expect(head.version.row).toMatchObject({ id: doc.v2, seq: 2 });
    const again = await restoreVersion(db, OWNER, { documentId: doc.id, versionId: doc.v1, sessionId: "" });
    // v3 equals v1, so restoring v1 once more is a no-op answering v3.
    const twice = await restoreVersion(db, OWNER, { documentId: doc.id, versionId: doc.v1, sessionId: "" });
    expect(twice).toMatchObject({ restored: false });
    expect(twice.version.row.id).toBe(again.version.row.id);
  });

  it("refuses another owner's document, an unknown version and an archived document", async () => {
    const doc = await twoVersions();
    const foreign = restoreVersion(db, "someone_else", { documentId: doc.id, versionId: doc.v1, sessionId: "" });
    await expect(foreign).rejects.toThrow(NotFoundError);
    await expect(foreign).rejects.toThrow("Document not found");
    const unknown = restoreVersion(db, OWNER, { documentId: doc.id, versionId: "not-a-uuid", sessionId: "" });
    await expect(unknown).rejects.toThrow("Version not found");
    await archiveDocument(db, OWNER, { documentId: doc.id, sessionId: "" });
    const archived = restoreVersion(db, OWNER, { documentId: doc.id, versionId: doc.v1, sessionId: "" });
    await expect(archived).rejects.toThrow(ConflictError);
  });
});

describe("diffVersions", () => {
  it("lists edits and creates in the version's order, then deletes, against the predecessor by default", async () => {
    const doc = await twoVersions();
    const diff = await diffVersions(db, OWNER, { documentId: doc.id, versionId: doc.v2, againstVersionId: "" });
    expect(diff.against?.row.id).toBe(doc.v1);
    expect(diff.changes.map((c) => [c.operation, c.chunkId, c.oldHtml, c.newHtml, c.insertAfterChunkId])).toEqual([
      ["edit", "c_a", p("c_a", "A"), p("c_a", "A2"), ""],
      ["create", "c_n", "", p("c_n", "N"), "c_b"],
      ["delete", "c_c", p("c_c", "C"), "", ""],
    ]);
    expect(diff.changes.every((c) => c.documentId === doc.id && c.aiExplanation === "")).toBe(true);
    const again = await diffVersions(db, OWNER, { documentId: doc.id, versionId: doc.v2, againstVersionId: "" });
    expect(again.changes.map((c) => c.changeId)).toEqual(diff.changes.map((c) => c.changeId));
    expect(new Set(diff.changes.map((c) => c.changeId)).size).toBe(3);
  });

  it("compares any two versions either way, and the first version with an empty document", async () => {
    const doc = await twoVersions();
    const back = await diffVersions(db, OWNER, { documentId: doc.id, versionId: doc.v1, againstVersionId: doc.v2 });
    expect(back.changes.map((c) => [c.operation, c.chunkId])).toEqual([
      ["edit", "c_a"],
      ["create", "c_c"],
      ["delete", "c_n"],
    ]);
    const first = await diffVersions(db, OWNER, { documentId: doc.id, versionId: doc.v1, againstVersionId: "" });
    expect(first.against).toBeUndefined();
    expect(first.changes.map((c) => [c.operation, c.chunkId])).toEqual([
      ["create", "c_h"],
      ["create", "c_a"],
      ["create", "c_b"],
      ["create", "c_c"],
    ]);
    const same = await diffVersions(db, OWNER, { documentId: doc.id, versionId: doc.v2, againstVersionId: doc.v2 });
    expect(same.changes).toEqual([]);
  });

  it("answers NotFoundError for another owner's document or a version not of this document", async () => {
    const doc = await twoVersions();
    const other = await twoVersions();
    await expect(
      diffVersions(db, "someone_else", { documentId: doc.id, versionId: doc.v2, againstVersionId: "" }),
    ).rejects.toThrow("Document not found");
    await expect(
      diffVersions(db, OWNER, { documentId: doc.id, versionId: other.v2, againstVersionId: "" }),
    ).rejects.toThrow("Version not found");
    await expect(
      diffVersions(db, OWNER, { documentId: doc.id, versionId: doc.v2, againstVersionId: other.v1 }),
    ).rejects.toThrow(NotFoundError);
  });
});
