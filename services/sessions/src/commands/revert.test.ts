// Revert and redo-revert of the conversation, on real Postgres.
import { ConflictError, type Knex, NotFoundError, SchemaError } from "@redline/service-kit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { newOwner, sessionsTestDb } from "../testing.js";
import { applyRevert, getRevert, planRevert, undoRevert } from "./revert.js";
import { openDocuments } from "./roster.js";
import { ensureSession, getHistory } from "./sessions.js";
import { appendTurn } from "./turns.js";

let db: Knex;
beforeAll(async () => {
  db = (await sessionsTestDb("revert_cmd")).db;
});
afterAll(() => db?.destroy());

const DOC = "3d9e4f5a-6b7c-4d8e-9f0a-1b2c3d4e5f6a";

async function conversation(owner: string, turns: number, checkpoint = "ck") {
  await ensureSession(db, owner, "r");
  for (let i = 0; i < turns; i++) {
    const msg = { userMessage: `u${i}`, aiMessage: `a${i}`, checkpointVersionId: `${checkpoint}${i}` };
    await appendTurn(db, owner, { sessionId: "r", ...msg, durableDocumentId: "", versionId: "", title: "" });
  }
}

describe("revert", () => {
  it("plans, applies, reads and undoes a revert once", async () => {
    const owner = newOwner();
    await conversation(owner, 3);
    const plan = await planRevert(db, owner, "r", 1);
    expect(plan.turns).toEqual([
      { turnIndex: 1, checkpointId: "ck1" },
      { turnIndex: 2, checkpointId: "ck2" },
    ]);
    expect(plan.composeText).toBe("u1");
    const { redoId, archived } = await applyRevert(db, owner, {
      sessionId: "r",
      turnIndex: 1,
      closeSlotIds: [],
      restored: [{ document_id: DOC, from_version_id: "v2", to_version_id: "v1" }],
    });
    expect(archived).toBe(2);
    expect((await getHistory(db, owner, "r")).messages).toHaveLength(2);
    const stored = await getRevert(db, owner, "r", redoId);
    expect([stored.turn_index, stored.restored[0].to_version_id, stored.undone_at]).toEqual([1, "v1", null]);
    expect(await undoRevert(db, owner, "r", redoId)).toBe(2);
    await expect(undoRevert(db, owner, "r", redoId)).rejects.toBeInstanceOf(ConflictError);
    expect((await getHistory(db, owner, "r")).messages).toHaveLength(6);
  });

  it("refuses a redo after newer turns, an unknown turn and another owner's session", async () => {
    const owner = newOwner();
    await conversation(owner, 2);
    const { redoId } = await applyRevert(db, owner, { sessionId: "r", turnIndex: 1, closeSlotIds: [], restored: [] });
    await conversation(owner, 1, "new");
    await expect(undoRevert(db, owner, "r", redoId)).rejects.toBeInstanceOf(ConflictError);
    await expect(planRevert(db, owner, "r", 7)).rejects.toBeInstanceOf(NotFoundError);
    await expect(planRevert(db, newOwner(), "r", 0)).rejects.toBeInstanceOf(NotFoundError);
    await expect(getRevert(db, owner, "r", "rc_unknown")).rejects.toBeInstanceOf(NotFoundError);
  });

  it("answers 422 for a turn without a restore point after a document was open", async () => {
    const owner = newOwner();
    await ensureSession(db, owner, "r");
    const documents = [{ durableDocumentId: DOC, title: "D", versionId: "v" }];
    await openDocuments(db, owner, { sessionId: "r", documents });
    await conversation(owner, 1);
    // A turn recorded before revert existed: no checkpoint.
    const old = { userMessage: "u", aiMessage: "a", checkpointVersionId: "", durableDocumentId: "", versionId: "" };
    await appendTurn(db, owner, { sessionId: "r", ...old, title: "" });
    await expect(planRevert(db, owner, "r", 1)).rejects.toBeInstanceOf(SchemaError);
  });
});
