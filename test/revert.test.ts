// Revert and redo-revert with the offline engine: the conversation and the documents go back to
// the state before a turn (as a new version: history is never rewritten), a dry run changes
// nothing, redo undoes it; 404, 409 and 422 as unshown-parts.md, Revert says.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startStackWithKey } from "./support/file-stack.js";
import { chunkMap, sampleContract } from "./support/fixtures.js";
import { startJob, waitForJob } from "./support/jobs.js";
import type { TestStack } from "./support/stack.js";

interface RevertBody {
  session_id: string;
  reverted_to_turn: number;
  compose_text: string;
  archived_turn_count: number;
  document_state: {
    html_content: string;
    version_id: string;
    chunk_count: number;
    last_modified?: string;
  } | null;
  editor_action: string;
  redo_checkpoint_id?: string;
  detail?: unknown;
}

let stack: TestStack;
let key: string;

beforeAll(async () => {
  ({ stack, key } = await startStackWithKey({ name: "revert" }, "rita"));
});
afterAll(() => stack?.close());

async function chat(body: Record<string, unknown>) {
  const res = await stack.call("POST", "/v1/chat", { key, body });
  expect(res.status).toBe(200);
  return (await res.json()) as {
    session_id: string;
    document_changes?: { updated_html?: string; version_id: string };
  };
}

async function revert(sid: string, body: Record<string, unknown>, k = key) {
  const res = await stack.call("POST", `/v1/sessions/${sid}/revert`, { key: k, body });
  return { status: res.status, body: (await res.json()) as RevertBody };
}

async function redo(sid: string, body: Record<string, unknown>) {
  const res = await stack.call("POST", `/v1/sessions/${sid}/redo-revert`, { key, body });
  return { status: res.status, body: (await res.json()) as RevertBody };
}

async function history(sid: string) {
  const res = await stack.call("GET", `/v1/sessions/${sid}/history`, { key });
  return (await res.json()) as {
    messages: { turn_index: number; sender: string; checkpoint_id?: string }[];
    document_state: { html_content?: string } | null;
  };
}

describe("revert and redo-revert", () => {
  let sid: string;
  const html: string[] = [];
  const versions: string[] = [];

  beforeAll(async () => {
    const t0 = await chat({ message: 'replace "Acme Corporation" with "Globex Inc"', document_html: sampleContract() });
    sid = t0.session_id;
    const t1 = await chat({ session_id: sid, message: 'make "thirty (30) days" italic' });
    const t2 = await chat({ session_id: sid, message: 'rename heading "5. Governing Law" to "5. Law"' });
    for (const t of [t0, t1, t2]) {
      html.push(t.document_changes?.updated_html ?? "");
      versions.push(t.document_changes?.version_id ?? "");
    }
  });

  it("records a checkpoint on every turn that had a document before it", async () => {
    const h = await history(sid);
    const byTurn = new Map(h.messages.map((m) => [m.turn_index, m.checkpoint_id]));
    expect(byTurn.get(1)).toBe(versions[0]);
    expect(byTurn.get(2)).toBe(versions[1]);
  });

  it("reports a dry run without changing the conversation or the document", async () => {
    const dry = await revert(sid, { turn_index: 1, dry_run: true });
    expect(dry.status).toBe(200);
    expect(dry.body).toMatchObject({
      session_id: sid,
      reverted_to_turn: 0,
      compose_text: 'make "thirty (30) days" italic',
      archived_turn_count: 2,
      editor_action: "update",
    });
    expect(dry.body).not.toHaveProperty("redo_checkpoint_id");
    expect(chunkMap(dry.body.document_state?.html_content ?? "")).toEqual(chunkMap(html[0]));
    expect((await history(sid)).messages).toHaveLength(6);
    expect(chunkMap((await history(sid)).document_state?.html_content ?? "")).toEqual(chunkMap(html[2]));
  });

  it("rewinds the conversation and restores the document as a new version; redo brings both back", async () => {
    const res = await revert(sid, { turn_index: 1 });
    expect(res.status).toBe(200);
    expect(res.body.reverted_to_turn).toBe(0);
    expect(res.body.archived_turn_count).toBe(2);
    expect(res.body.redo_checkpoint_id).toEqual(expect.any(String));
    expect(res.body.document_state?.version_id).not.toBe(versions[0]);
    expect(chunkMap(res.body.document_state?.html_content ?? "")).toEqual(chunkMap(html[0]));
    const after = await history(sid);
    expect(after.messages.map((m) => m.turn_index)).toEqual([0, 0]);
    expect(chunkMap(after.document_state?.html_content ?? "")).toEqual(chunkMap(html[0]));

    // Turn 1 is no longer in the active history; turn 7 never was.
    expect((await revert(sid, { turn_index: 1 })).status).toBe(404);
    expect((await revert(sid, { turn_index: 7 })).status).toBe(404);

    const redoId = res.body.redo_checkpoint_id;
    expect((await redo(sid, { turn_index: 2, redo_checkpoint_id: redoId })).status).toBe(400);
    expect((await redo(sid, { turn_index: 1, redo_checkpoint_id: "rc_unknown" })).status).toBe(404);
    const back = await redo(sid, { turn_index: 1, redo_checkpoint_id: redoId });
    expect(back.status).toBe(200);
    expect(back.body.reverted_to_turn).toBe(2);
    expect(chunkMap(back.body.document_state?.html_content ?? "")).toEqual(chunkMap(html[2]));
    expect((await history(sid)).messages).toHaveLength(6);
    expect((await redo(sid, { turn_index: 1, redo_checkpoint_id: redoId })).status).toBe(409);
  });

  it("reverting to turn 0 empties the session (editor_action clear) and redo restores it", async () => {
    const res = await revert(sid, { turn_index: 0 });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ reverted_to_turn: -1, document_state: null, editor_action: "clear" });
    expect((await history(sid)).messages).toEqual([]);
    const back = await redo(sid, { turn_index: 0, redo_checkpoint_id: res.body.redo_checkpoint_id });
    expect(back.status).toBe(200);
    expect(chunkMap(back.body.document_state?.html_content ?? "")).toEqual(chunkMap(html[2]));
  });

  it("answers 409 while a job awaits approval on the session, and works once it is cancelled", async () => {
    const job = await startJob(stack, key, {
      session_id: sid,
      message: 'add paragraph "Prices exclude VAT." after section "2. Fees and Payment"',
      approval_mode: "ask_every_time",
    });
    await waitForJob(stack, key, job.body.job_id, ["awaiting_approval"]);
    const blocked = await revert(sid, { turn_index: 2 });
    expect(blocked.status).toBe(409);
    expect(typeof blocked.body.detail).toBe("string");
    await stack.call("POST", `/v1/jobs/${job.body.job_id}/cancel`, { key });
    expect((await revert(sid, { turn_index: 2, dry_run: true })).status).toBe(200);
  });

  it("answers 422 for a turn without a restore point and 404 for another owner's session", async () => {
    // A turn recorded before checkpoints existed carries none although a document was open.
    await stack.sessionsDb("sessions.messages").where({ session_id: sid, turn_index: 2 }).update({ checkpoint_id: "" });
    const res = await revert(sid, { turn_index: 2 });
    expect(res.status).toBe(422);
    const other = await stack.createKey("oscar");
    expect((await revert(sid, { turn_index: 1 }, other)).status).toBe(404);
    expect((await revert(sid, { turn_index: -1 })).status).toBe(422);
  });
});
