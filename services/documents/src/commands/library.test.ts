// The Files view on a real database: list, metadata updates, archive state and the event feed.
import { NotFoundError } from "@redline/service-kit";
import { afterAll, describe, expect, it } from "vitest";
import { migratedTestDb } from "../db/test-db.js";
import {
  archiveDocument,
  describeDocument,
  documentsMeta,
  listDocumentEvents,
  listDocuments,
  unarchiveDocument,
  updateDocument,
} from "./library.js";
import { createDocument } from "./load.js";

const db = await migratedTestDb("unit_documents_library");
afterAll(() => db.destroy());

const create = (owner: string, text: string) =>
  createDocument(db, owner, { html: `<h1>${text}</h1><p>${text} body</p><p>end</p>`, sessionId: "s1" });
const list = (owner: string, archived = false) =>
  listDocuments(db, owner, { limit: 0, offset: 0, archived, includePreview: true });

describe("library", () => {
  it("lists the owner's documents, most recently updated first, with previews", async () => {
    const a = await create("lib_list", "First");
    const b = await create("lib_list", "Second");
    await create("lib_other", "Foreign");
    await updateDocument(db, "lib_list", { documentId: a.row.id, title: "First renamed", sessionId: "s1" });
    const { documents, total } = await list("lib_list");
    expect(total).toBe(2);
    expect(documents.map((d) => d.row.id)).toEqual([a.row.id, b.row.id]);
    expect(documents[0].row.title).toBe("First renamed");
    expect(documents[0].previewHtml).toContain("First body");
    const page = await listDocuments(db, "lib_list", { limit: 1, offset: 1, archived: false, includePreview: false });
    expect(page.documents.map((d) => [d.row.id, d.previewHtml])).toEqual([[b.row.id, ""]]);
    expect((await documentsMeta(db, "lib_list", [a.row.id, "nope", b.row.id])).length).toBe(2);
  });

  it("archives and unarchives with events, idempotently, revealing nothing of foreign ids", async () => {
    const doc = await create("lib_archive", "Doc");
    const archived = await archiveDocument(db, "lib_archive", { documentId: doc.row.id, sessionId: "s1" });
    expect(archived.alreadyArchived).toBe(false);
    expect(archived.row.archived_at).not.toBeNull();
    expect(
      (await archiveDocument(db, "lib_archive", { documentId: doc.row.id, sessionId: "s1" })).alreadyArchived,
    ).toBe(true);
    expect((await list("lib_archive")).total).toBe(0);
    expect((await list("lib_archive", true)).total).toBe(1);
    await expect(archiveDocument(db, "intruder", { documentId: doc.row.id, sessionId: "" })).rejects.toBeInstanceOf(
      NotFoundError,
    );
    expect(await unarchiveDocument(db, "intruder", { documentId: doc.row.id, sessionId: "" })).toEqual({
      row: undefined,
      unarchived: false,
    });
    const back = await unarchiveDocument(db, "lib_archive", { documentId: doc.row.id, sessionId: "s2" });
    expect(back.unarchived).toBe(true);
    expect(back.row?.archived_at).toBeNull();
    expect((await unarchiveDocument(db, "lib_archive", { documentId: doc.row.id, sessionId: "s2" })).unarchived).toBe(
      false,
    );
    const { events } = await listDocumentEvents(db, "lib_archive", {
      documentIds: [doc.row.id],
      afterId: 0,
      excludeSessionId: "",
      limit: 0,
      types: [],
    });
    expect(events.map((e) => e.payload.kind)).toEqual(["archived", "unarchived"]);
  });

  it("pages the event feed by id, leaving out the polling session's own events", async () => {
    const doc = await create("lib_events", "Doc");
    for (const title of ["t1", "t2", "t3"])
      await updateDocument(db, "lib_events", { documentId: doc.row.id, title, sessionId: title === "t2" ? "me" : "x" });
    const q = { documentIds: [doc.row.id], afterId: 0, excludeSessionId: "me", limit: 1, types: [] };
    const first = await listDocumentEvents(db, "lib_events", q);
    expect(first.hasMore).toBe(true);
    expect(first.events[0].payload).toEqual({ kind: "metadata", title: "t1" });
    const rest = await listDocumentEvents(db, "lib_events", { ...q, afterId: Number(first.events[0].id), limit: 10 });
    expect(rest.events.map((e) => e.payload.title)).toEqual(["t3"]);
    expect(rest.hasMore).toBe(false);
    const created = await listDocumentEvents(db, "lib_events", { ...q, types: ["document_created"] });
    expect(created.events).toHaveLength(1);
    expect((await listDocumentEvents(db, "someone", { ...q, limit: 10 })).events).toEqual([]);
  });

  it("describes a document's structure and updates its page setup", async () => {
    const doc = await create("lib_describe", "Heading");
    const described = await describeDocument(db, "lib_describe", doc.row.id);
    expect(described.structure).toMatchObject({ sectionCount: 1, blockCount: 3, images: 0, diagrams: 0 });
    expect(described.structure.headings[0]).toMatchObject({ level: 1, text: "Heading", position: 0 });
    const row = await updateDocument(db, "lib_describe", {
      documentId: doc.row.id,
      pageSetup: { orientation: "landscape" },
      sessionId: "",
    });
    expect(row.page_setup).toEqual({ orientation: "landscape" });
    expect(row.title).toBe("Heading");
    await expect(describeDocument(db, "lib_other", doc.row.id)).rejects.toBeInstanceOf(NotFoundError);
  });
});
