// Sessions, turns and memory notes against real Postgres (the commands and the SQL behind them).
import { type Knex, NotFoundError } from "@redline/service-kit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { newOwner, sessionsTestDb } from "../testing.js";
import { appendMemoryLine, clearMemoryNote, MEMORY_MAX_LINES, remember } from "./memory.js";
import { ensureSession, getHistory, getSession, getTurnContext, listSessions } from "./sessions.js";
import { type AppendTurnInput, appendTurn } from "./turns.js";

let db: Knex;
beforeAll(async () => {
  db = (await sessionsTestDb("sessions_cmd")).db;
});
afterAll(() => db?.destroy());

const DOC = "4b0c5a2e-0d5c-4d59-9c8f-0b1f3c4a5e6f";

function turn(sessionId: string, n: number, extra: Partial<AppendTurnInput> = {}): AppendTurnInput {
  const base = { sessionId, userMessage: `ask ${n}`, aiMessage: `answer ${n}`, checkpointVersionId: "" };
  return { ...base, durableDocumentId: "", versionId: "", title: "", ...extra };
}

describe("ensureSession and getSession", () => {
  it("mints an id, then finds the same session; another owner's same id is its own", async () => {
    const owner = newOwner();
    const first = await ensureSession(db, owner, "");
    expect(first.created).toBe(true);
    expect(first.view.row.id).toMatch(/^sess_[0-9a-f]{24}$/);
    const again = await ensureSession(db, owner, first.view.row.id);
    expect(again.created).toBe(false);
    const other = await ensureSession(db, newOwner(), first.view.row.id);
    expect(other.created).toBe(true);
    await expect(getSession(db, newOwner(), first.view.row.id)).rejects.toBeInstanceOf(NotFoundError);
  });
});

describe("appendTurn", () => {
  it("numbers turns, titles the session from the first message and keeps user before ai", async () => {
    const owner = newOwner();
    const { view } = await ensureSession(db, owner, "t1");
    expect(await appendTurn(db, owner, turn("t1", 0, { userMessage: "x".repeat(200) }))).toBe(0);
    expect(await appendTurn(db, owner, turn("t1", 1))).toBe(1);
    const { view: after, messages } = await getHistory(db, owner, view.row.id);
    expect(after.row.title).toBe("x".repeat(80));
    expect(after.messageCount).toBe(4);
    expect(messages.map((m) => [m.turn_index, m.sender])).toEqual([
      [0, "user"],
      [0, "ai"],
      [1, "user"],
      [1, "ai"],
    ]);
  });

  it("is idempotent per turn key: a replay returns the first index and writes no second message", async () => {
    const owner = newOwner();
    await ensureSession(db, owner, "tk");
    expect(await appendTurn(db, owner, turn("tk", 0, { turnKey: "chat:a" }))).toBe(0);
    expect(await appendTurn(db, owner, turn("tk", 0, { turnKey: "chat:a", aiMessage: "retried" }))).toBe(0);
    // Parallel replays of a new key (one wins the unique index; the others read its index).
    const replays = await Promise.all(
      Array.from({ length: 5 }, () => appendTurn(db, owner, turn("tk", 1, { turnKey: "chat:b" }))),
    );
    expect(replays).toEqual([1, 1, 1, 1, 1]);
    expect(await appendTurn(db, owner, turn("tk", 2))).toBe(2);
    const { view, messages } = await getHistory(db, owner, "tk");
    expect(view.messageCount).toBe(6);
    expect(messages.map((m) => [m.turn_index, m.sender, m.content])).toEqual([
      [0, "user", "ask 0"],
      [0, "ai", "answer 0"],
      [1, "user", "ask 1"],
      [1, "ai", "answer 1"],
      [2, "user", "ask 2"],
      [2, "ai", "answer 2"],
    ]);
    // The key is per session and owner: another owner's session records its own turn.
    await ensureSession(db, newOwner(), "tk2");
    const other = newOwner();
    await ensureSession(db, other, "tk");
    expect(await appendTurn(db, other, turn("tk", 0, { turnKey: "chat:a" }))).toBe(0);
    expect((await getSession(db, other, "tk")).messageCount).toBe(2);
  });

  it("refuses another owner's session and writes nothing", async () => {
    const owner = newOwner();
    await ensureSession(db, owner, "t2");
    await expect(appendTurn(db, newOwner(), turn("t2", 0))).rejects.toBeInstanceOf(NotFoundError);
    expect((await getSession(db, owner, "t2")).messageCount).toBe(0);
  });

  it("attaches the turn's document as the focused primary slot", async () => {
    const owner = newOwner();
    await ensureSession(db, owner, "t3");
    const attach = { focus: true, slotId: "" };
    await appendTurn(db, owner, turn("t3", 0, { durableDocumentId: DOC, versionId: "v1", title: "Lease", attach }));
    const { roster } = await getSession(db, owner, "t3");
    expect(roster.map((r) => [r.slot_id, r.document_id, r.focused, r.last_seen_version_id])).toEqual([
      ["primary", DOC, true, "v1"],
    ]);
    // A later turn on the same document moves its last-seen version without a new slot.
    await appendTurn(db, owner, turn("t3", 1, { durableDocumentId: DOC, versionId: "v2" }));
    expect((await getSession(db, owner, "t3")).roster.map((r) => r.last_seen_version_id)).toEqual(["v2"]);
  });

  it("remembers the user's line, also when the note moved since the turn read it", async () => {
    const owner = newOwner();
    await ensureSession(db, owner, "t4");
    const seen = await getTurnContext(db, owner, { sessionId: "t4", historyLimit: 10, memoryKey: "" });
    expect(seen.memoryNote).toBe("");
    await remember(db, owner, "", "from elsewhere");
    const input = turn("t4", 0, { userMessage: "use British spelling", remember: true, memoryNoteSeen: "" });
    await appendTurn(db, owner, input);
    const ctx = await getTurnContext(db, owner, { sessionId: "t4", historyLimit: 1, memoryKey: "" });
    expect(ctx.memoryNote).toBe("from elsewhere\nuse British spelling");
    expect(ctx.messages.map((m) => m.sender)).toEqual(["ai"]);
  });

  it("records a turn with its remembered line or not at all: a failed fallback line rolls the turn back, and the retry records both once", async () => {
    const owner = newOwner();
    await ensureSession(db, owner, "t5");
    // The note moves after the turn read it, so the line goes in through the fallback write;
    // the trigger makes that write fail, as sessions dying between the turn and its line would.
    await remember(db, owner, "", "from elsewhere");
    const fn = `fail_note_${owner}`;
    await db.raw(`create function sessions.${fn}() returns trigger language plpgsql as $$
      begin if new.owner_id = '${owner}' and new.note like '%use British spelling%' then
        raise exception 'note write failed'; end if; return new; end $$`);
    await db.raw(
      `create trigger ${fn} before update on sessions.memory_notes for each row execute function sessions.${fn}()`,
    );
    const input = turn("t5", 0, {
      userMessage: "use British spelling",
      remember: true,
      memoryNoteSeen: "",
      turnKey: "chat:remember",
    });
    try {
      await expect(appendTurn(db, owner, input)).rejects.toThrow(/note write failed/);
      expect((await getHistory(db, owner, "t5")).messages).toEqual([]);
    } finally {
      await db.raw(`drop trigger ${fn} on sessions.memory_notes`);
      await db.raw(`drop function sessions.${fn}()`);
    }
    expect(await appendTurn(db, owner, input)).toBe(0);
    expect(await appendTurn(db, owner, input)).toBe(0);
    const ctx = await getTurnContext(db, owner, { sessionId: "t5", historyLimit: 10, memoryKey: "" });
    expect(ctx.memoryNote).toBe("from elsewhere\nuse British spelling");
    expect(ctx.messages.map((m) => [m.turn_index, m.sender])).toEqual([
      [0, "user"],
      [0, "ai"],
    ]);
  });
});

describe("listSessions", () => {
  it("lists the owner's sessions most recent first with message counts", async () => {
    const owner = newOwner();
    await ensureSession(db, owner, "older");
    await ensureSession(db, owner, "newer");
    await appendTurn(db, owner, turn("newer", 0));
    const list = await listSessions(db, owner, { limit: 0 });
    expect(list.map((s) => [s.row.id, s.messageCount])).toEqual([
      ["newer", 2],
      ["older", 0],
    ]);
    expect(await listSessions(db, newOwner(), { limit: 10 })).toEqual([]);
  });
});

describe("memory notes", () => {
  it("keeps the last lines, skips a repeated line, and clears per key", async () => {
    let note = "";
    for (let i = 0; i < MEMORY_MAX_LINES + 3; i++) note = appendMemoryLine(note, `line ${i}`);
    expect(note.split("\n")).toHaveLength(MEMORY_MAX_LINES);
    expect(appendMemoryLine("a", "  a ")).toBe("a");
    const owner = newOwner();
    await remember(db, owner, "customer-1", "hello");
    expect(await clearMemoryNote(db, owner, "customer-1")).toBe(1);
    expect(await clearMemoryNote(db, owner, "customer-1")).toBe(0);
  });
});
