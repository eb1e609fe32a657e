// Store functions whose guarantees live in one SQL statement: owner scoping, the refused attach
// of a turn, the row lock's roster read and the holders join.
import type { Knex } from "@redline/service-kit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { newOwner, sessionsTestDb } from "../../testing.js";
import { documentHolders, insertSlot } from "./roster.js";
import { ensureSessionRow, ensureSessionWithHistory, lockSessionWithRoster } from "./sessions.js";
import { writeTurn } from "./turns.js";

let db: Knex;
beforeAll(async () => {
  db = (await sessionsTestDb("store")).db;
});
afterAll(() => db?.destroy());

const DOC = "5f1a2b3c-4d5e-4f6a-8b7c-9d0e1f2a3b4c";
const exchange = (sessionId: string) => ({
  sessionId,
  userMessage: "hi",
  aiMessage: "hello",
  checkpointVersionId: "",
  durableDocumentId: DOC,
  versionId: "v1",
  title: "T",
  sessionTitle: "T",
});

describe("sessions store", () => {
  it("creates once per (owner, id) and reads history and note in the same statement", async () => {
    const owner = newOwner();
    expect((await ensureSessionRow(db, owner, "x"))?.created).toBe(true);
    expect((await ensureSessionRow(db, owner, "x"))?.created).toBe(false);
    const read = await ensureSessionWithHistory(db, owner, "x", 5, "k");
    expect([read?.messages, read?.memoryNote]).toEqual([[], ""]);
    await db.transaction(async (trx) => {
      expect(await lockSessionWithRoster(trx, newOwner(), "x", "")).toBeUndefined();
      expect((await lockSessionWithRoster(trx, owner, "x", ""))?.roster).toEqual([]);
    });
  });
});

describe("writeTurn", () => {
  it("writes nothing into another owner's session", async () => {
    await ensureSessionRow(db, newOwner(), "y");
    const res = await writeTurn(db, newOwner(), exchange("y"));
    expect(res).toEqual({ owned: false, turnIndex: null, remembered: false });
  });

  it("attaches the turn's document in the same statement: a new slot after primary, focused alone", async () => {
    const owner = newOwner();
    await ensureSessionRow(db, owner, "z");
    const taken = { owner_id: owner, session_id: "z", slot_id: "primary", position: 0, focused: true };
    await insertSlot(db, { ...taken, document_id: null, title: "", last_seen_version_id: "" });
    const res = await writeTurn(db, owner, { ...exchange("z"), attach: { focus: true, slotId: "" } });
    expect(res).toEqual({ owned: true, turnIndex: 0, remembered: false });
    const holders = await documentHolders(db, owner, [DOC], "");
    expect(holders.map((h) => h.slot_id)).toEqual([expect.stringMatching(/^doc_/)]);
    const locked = await db.transaction((trx) => lockSessionWithRoster(trx, owner, "z", ""));
    expect(locked?.roster.filter((r) => r.focused).map((r) => r.document_id)).toEqual([DOC]);
  });
});
