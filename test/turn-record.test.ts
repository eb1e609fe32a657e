// The sessions RPCs a chat turn runs on: GetTurnContext (the session, its recent history and a
// memory note in one call) and AppendTurn with a roster attach and a memory line (one
// transaction). Both sit on every turn's critical path; these tests pin their semantics.
import { sessionsV1 } from "@redline/grpc-stubs";
import { createRpcClient, type Principal } from "@redline/service-kit";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { startTestStack, type TestStack } from "./support/stack.js";

let stack: TestStack;
let sessions: ReturnType<typeof createRpcClient<typeof sessionsV1.SessionsServiceService>>;
let alice: Principal;
let bob: Principal;

async function principalOf(user: string): Promise<Principal> {
  const key = await stack.createKey(user);
  const resolved = (await stack.accounts.resolveApiKey({ apiKey: key })).principal;
  if (!resolved) throw new Error("no principal");
  return resolved;
}

const DOC_A = "0b1c6b9e-4f7a-4c1e-9a55-000000000001";
const DOC_B = "0b1c6b9e-4f7a-4c1e-9a55-000000000002";

function turn(sessionId: string, n: number, extra: Partial<sessionsV1.AppendTurnRequest> = {}) {
  return {
    sessionId,
    userMessage: `question ${n}`,
    aiMessage: `answer ${n}`,
    checkpointVersionId: "",
    durableDocumentId: "",
    versionId: "",
    title: "",
    remember: false,
    memoryKey: "",
    ...extra,
  };
}

beforeAll(async () => {
  stack = await startTestStack(inject("infra"), { name: "turn_record" });
  sessions = createRpcClient(sessionsV1.SessionsServiceService, stack.addrs.sessions);
  alice = await principalOf("alice-turns");
  bob = await principalOf("bob-turns");
});
afterAll(async () => {
  sessions?.close();
  await stack?.close();
});

describe("GetTurnContext", () => {
  it("creates a session on first use, then returns the last messages in order and the memory note", async () => {
    const first = await sessions.getTurnContext(
      { sessionId: "", historyLimit: 4, memoryKey: "" },
      { principal: alice },
    );
    const sid = first.session?.sessionId ?? "";
    expect(sid).toMatch(/^sess_/);
    expect(first.created).toBe(true);
    expect(first.messages).toEqual([]);
    for (let n = 0; n < 3; n++) await sessions.appendTurn(turn(sid, n), { principal: alice });
    await sessions.appendTurn(turn(sid, 3, { remember: true, memoryKey: "ctx-key" }), { principal: alice });

    const ctx = await sessions.getTurnContext(
      { sessionId: sid, historyLimit: 4, memoryKey: "ctx-key" },
      { principal: alice },
    );
    expect(ctx.created).toBe(false);
    expect(ctx.session?.messageCount).toBe(8);
    expect(ctx.messages.map((m) => `${m.turnIndex}:${m.sender}`)).toEqual(["2:user", "2:ai", "3:user", "3:ai"]);
    expect(ctx.messages[3].content).toBe("answer 3");
    expect(ctx.memoryNote).toBe("question 3");
    const none = await sessions.getTurnContext(
      { sessionId: sid, historyLimit: 0, memoryKey: "other" },
      { principal: alice },
    );
    expect(none.messages).toEqual([]);
    expect(none.memoryNote).toBe("");
  });

  it("gives another owner's session id to the caller as a new session of its own, with none of the data", async () => {
    const own = await sessions.getTurnContext({ sessionId: "", historyLimit: 2, memoryKey: "" }, { principal: alice });
    const sid = own.session?.sessionId ?? "";
    await sessions.appendTurn(turn(sid, 0), { principal: alice });
    const theirs = await sessions.getTurnContext(
      { sessionId: sid, historyLimit: 10, memoryKey: "" },
      { principal: bob },
    );
    expect(theirs.created).toBe(true);
    expect(theirs.session?.sessionId).toBe(sid);
    expect(theirs.messages).toEqual([]);
    expect(JSON.stringify(theirs)).not.toContain("question 0");
    const mine = await sessions.getTurnContext(
      { sessionId: sid, historyLimit: 10, memoryKey: "" },
      { principal: alice },
    );
    expect(mine.messages.map((m) => m.content)).toContain("question 0");
  });
});

describe("AppendTurn with attach and remember", () => {
  // With the note as seen the turn takes the one-statement path; without it, the row lock.
  it.each([
    ["in one statement", { memoryNoteSeen: "" }],
    ["under the session lock", {}],
  ])("puts the turn's document in the roster, focused, at the turn's version and title (%s)", async (_, seen) => {
    const sid = (await sessions.ensureSession({ sessionId: "" }, { principal: alice })).session?.sessionId ?? "";
    await sessions.attachDocument(
      { sessionId: sid, durableDocumentId: DOC_A, title: "A", focus: true, versionId: "v-a", slotId: "" },
      { principal: alice },
    );
    const res = await sessions.appendTurn(
      turn(sid, 0, {
        durableDocumentId: DOC_B,
        versionId: "v-b2",
        title: "Loaded B",
        attach: { focus: true, slotId: "" },
        remember: true,
        memoryKey: `attach-key-${sid}`,
        ...seen,
      }),
      { principal: alice },
    );
    expect(res.turnIndex).toBe(0);
    const roster = (await sessions.getSession({ sessionId: sid }, { principal: alice })).session?.roster ?? [];
    expect(roster.map((r) => [r.documentId, r.durableDocumentId, r.focused, r.lastSeenVersionId, r.title])).toEqual([
      [expect.stringMatching(/^doc_[0-9a-f]{8}$/), DOC_B, true, "v-b2", "Loaded B"],
      ["primary", DOC_A, false, "v-a", "A"],
    ]);
    const ctx = await sessions.getTurnContext(
      { sessionId: sid, historyLimit: 2, memoryKey: `attach-key-${sid}` },
      { principal: alice },
    );
    expect(ctx.memoryNote).toBe("question 0");
    expect(ctx.session?.title).toBe("Loaded B");
  });

  it("rebinds the slot it names instead of opening another", async () => {
    const sid = (await sessions.ensureSession({ sessionId: "" }, { principal: alice })).session?.sessionId ?? "";
    await sessions.attachDocument(
      { sessionId: sid, durableDocumentId: DOC_A, title: "A", focus: true, versionId: "v1", slotId: "" },
      { principal: alice },
    );
    await sessions.appendTurn(
      turn(sid, 0, {
        durableDocumentId: DOC_B,
        versionId: "v2",
        title: "B",
        attach: { focus: true, slotId: "primary" },
      }),
      { principal: alice },
    );
    const roster = (await sessions.getSession({ sessionId: sid }, { principal: alice })).session?.roster ?? [];
    expect(roster.map((r) => [r.documentId, r.durableDocumentId, r.focused])).toEqual([["primary", DOC_B, true]]);
  });

  it("keeps every line when turns of several sessions add to one memory note at once", async () => {
    const ids = await Promise.all(
      Array.from(
        { length: 6 },
        async () => (await sessions.ensureSession({ sessionId: "" }, { principal: bob })).session?.sessionId ?? "",
      ),
    );
    // Half pass the note as they read it (the optimistic statement), half do not (the row lock).
    await Promise.all(
      ids.map((sid, n) =>
        sessions.appendTurn(
          turn(sid, n, { remember: true, memoryKey: "shared", ...(n % 2 === 0 ? { memoryNoteSeen: "" } : {}) }),
          { principal: bob },
        ),
      ),
    );
    const ctx = await sessions.getTurnContext(
      { sessionId: ids[0], historyLimit: 0, memoryKey: "shared" },
      { principal: bob },
    );
    expect(ctx.memoryNote.split("\n").sort()).toEqual(ids.map((_, n) => `question ${n}`).sort());
  });

  it("adds the memory line to the note as the turn saw it, or to the newer note when it moved", async () => {
    const sid = (await sessions.ensureSession({ sessionId: "" }, { principal: alice })).session?.sessionId ?? "";
    await sessions.appendTurn(turn(sid, 0, { remember: true, memoryKey: "seen", memoryNoteSeen: "" }), {
      principal: alice,
    });
    // Turn 2 read the note before turn 1 wrote it: its stale view must not erase turn 1's line.
    await sessions.appendTurn(turn(sid, 1, { remember: true, memoryKey: "seen", memoryNoteSeen: "" }), {
      principal: alice,
    });
    await sessions.appendTurn(
      turn(sid, 2, { remember: true, memoryKey: "seen", memoryNoteSeen: "question 0\nquestion 1" }),
      { principal: alice },
    );
    const ctx = await sessions.getTurnContext(
      { sessionId: sid, historyLimit: 6, memoryKey: "seen" },
      { principal: alice },
    );
    expect(ctx.memoryNote).toBe("question 0\nquestion 1\nquestion 2");
    expect(ctx.messages.map((m) => m.turnIndex)).toEqual([0, 0, 1, 1, 2, 2]);
  });

  it("answers 404 for another owner's session and writes nothing", async () => {
    const sid = (await sessions.ensureSession({ sessionId: "" }, { principal: alice })).session?.sessionId ?? "";
    for (const extra of [
      { remember: true, memoryKey: "leak" },
      { remember: true, memoryKey: "leak", memoryNoteSeen: "" },
      { durableDocumentId: DOC_A, versionId: "v", attach: { focus: true, slotId: "" } },
    ]) {
      const err = await sessions.appendTurn(turn(sid, 0, extra), { principal: bob }).catch((e: unknown) => e);
      expect(err).toMatchObject({ httpStatus: 404 });
    }
    const roster = (await sessions.getSession({ sessionId: sid }, { principal: alice })).session?.roster;
    expect(roster).toEqual([]);
    const ctx = await sessions.getTurnContext({ sessionId: sid, historyLimit: 5, memoryKey: "" }, { principal: alice });
    expect(ctx.session?.messageCount).toBe(0);
    const bobs = await sessions.getTurnContext(
      { sessionId: "", historyLimit: 0, memoryKey: "leak" },
      { principal: bob },
    );
    expect(bobs.memoryNote).toBe("");
  });
});
