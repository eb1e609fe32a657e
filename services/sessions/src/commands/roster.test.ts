// The roster (open, blank, focus, close, seen, holders, unlink, watched) and editor actions, on real Postgres.
import { InputError, type Knex, NotFoundError } from "@redline/service-kit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { newOwner, sessionsTestDb } from "../testing.js";
import { listEditorActions, recordEditorActions } from "./editor-actions.js";
import {
  attachDocument,
  closeDocument,
  focusDocument,
  listDocumentHolders,
  listWatchedDocuments,
  markSeen,
  openBlank,
  openDocuments,
  resolveDocument,
  unlinkDocument,
} from "./roster.js";
import { ensureSession, getSession } from "./sessions.js";

let db: Knex;
beforeAll(async () => {
  db = (await sessionsTestDb("roster_cmd")).db;
});
afterAll(() => db?.destroy());

const A = "0a6b1c2d-3e4f-4a5b-8c6d-7e8f9a0b1c2d";
const B = "1b7c2d3e-4f5a-4b6c-9d7e-8f9a0b1c2d3e";
const C = "2c8d3e4f-5a6b-4c7d-8e8f-9a0b1c2d3e4f";
const doc = (id: string, title = id.slice(0, 4)) => ({ durableDocumentId: id, title, versionId: `v_${title}` });

async function sessionWith(owner: string, id: string, ...docs: string[]) {
  await ensureSession(db, owner, id);
  return openDocuments(db, owner, { sessionId: id, documents: docs.map((d) => doc(d)) });
}

describe("openDocuments", () => {
  it("opens in new slots, focuses the first, and gives a reopened document its slot back", async () => {
    const owner = newOwner();
    const { opened } = await sessionWith(owner, "s", A, B);
    expect(opened.map((r) => [r.slot_id === "primary", r.focused])).toEqual([
      [true, true],
      [false, false],
    ]);
    await closeDocument(db, owner, { sessionId: "s", documentRef: A, nextFocus: "" });
    const again = await openDocuments(db, owner, { sessionId: "s", documents: [doc(A)] });
    expect(again.opened[0].slot_id).toBe("primary");
    await expect(openDocuments(db, owner, { sessionId: "s", documents: [doc("nope")] })).rejects.toBeInstanceOf(
      InputError,
    );
    await expect(sessionWith(newOwner(), "s", A).then(() => 0)).resolves.toBe(0);
    await expect(openDocuments(db, newOwner(), { sessionId: "missing", documents: [] })).rejects.toBeInstanceOf(
      NotFoundError,
    );
  });
});

describe("blank tabs, focus and close", () => {
  it("opens a focused blank tab, moves the focus, and closes with next_focus", async () => {
    const owner = newOwner();
    await sessionWith(owner, "f", A, B, C);
    const blank = await openBlank(db, owner, { sessionId: "f", title: "" });
    expect([blank.entry.title, blank.entry.document_id, blank.entry.focused]).toEqual([
      "Untitled document",
      null,
      true,
    ]);
    const focused = await focusDocument(db, owner, { sessionId: "f", documentRef: B });
    expect(focused.view.roster[0].document_id).toBe(B);
    const closed = await closeDocument(db, owner, { sessionId: "f", documentRef: B, nextFocus: C });
    expect(closed.closed.closed_reason).toBe("closed");
    expect(closed.view.roster.find((r) => r.focused)?.document_id).toBe(C);
    await expect(focusDocument(db, owner, { sessionId: "f", documentRef: B })).rejects.toBeInstanceOf(NotFoundError);
    const found = await resolveDocument(db, owner, { sessionId: "f", documentRef: B, includeClosed: true });
    expect(found.closed_at).not.toBeNull();
  });

  it("records a seen version per slot and 404s an unknown slot", async () => {
    const owner = newOwner();
    await sessionWith(owner, "m", A);
    const row = await markSeen(db, owner, { sessionId: "m", slotId: "primary", versionId: "v9", title: "New" });
    expect([row.last_seen_version_id, row.title]).toEqual(["v9", "New"]);
    await expect(
      markSeen(db, owner, { sessionId: "m", slotId: "doc_x", versionId: "v9", title: "" }),
    ).rejects.toBeInstanceOf(NotFoundError);
  });

  it("attaches into a named slot, rebinding a blank tab", async () => {
    const owner = newOwner();
    await ensureSession(db, owner, "b");
    const blank = await openBlank(db, owner, { sessionId: "b", title: "Draft" });
    const input = { sessionId: "b", durableDocumentId: A, title: "Draft", focus: false, versionId: "v1" };
    const row = await attachDocument(db, owner, { ...input, slotId: blank.entry.slot_id });
    expect([row.slot_id, row.document_id, row.focused]).toEqual([blank.entry.slot_id, A, true]);
  });
});

describe("holders, unlink and watched documents", () => {
  it("counts holders across sessions, unlinks on archive and keeps watching the archived document", async () => {
    const owner = newOwner();
    await sessionWith(owner, "one", A, B);
    await sessionWith(owner, "two", A);
    const holders = await listDocumentHolders(db, owner, { documentIds: [A, "not-a-uuid"], excludeSessionId: "one" });
    expect(holders.map((h) => h.session_id)).toEqual(["two"]);
    expect((await unlinkDocument(db, owner, A)).sort()).toEqual(["one", "two"]);
    expect((await getSession(db, owner, "one")).roster.map((r) => [r.document_id, r.focused])).toEqual([[B, true]]);
    const watched = await listWatchedDocuments(db, owner, "one");
    const slotOf = new Map(watched.map((w) => [w.documentId, w.slotId]));
    expect(slotOf.get(A)).toBe("");
    expect(slotOf.get(B)).toMatch(/^doc_[0-9a-f]{8}$/);
    await expect(listWatchedDocuments(db, newOwner(), "one")).rejects.toBeInstanceOf(NotFoundError);
  });
});

describe("editor actions", () => {
  it("records in order and lists oldest first; another owner's session is not found", async () => {
    const owner = newOwner();
    await ensureSession(db, owner, "e");
    const action = (value: string) => ({ action: "font", value, documentId: "", chunkIds: ["c1"], details: null });
    await recordEditorActions(db, owner, "e", [action("Arial"), action("Georgia")]);
    const rows = await listEditorActions(db, owner, "e");
    expect(rows.map((r) => [r.value, r.chunk_ids])).toEqual([
      ["Arial", ["c1"]],
      ["Georgia", ["c1"]],
    ]);
    await expect(listEditorActions(db, newOwner(), "e")).rejects.toBeInstanceOf(NotFoundError);
  });
});
