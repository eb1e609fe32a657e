// The document crosses once (issue #31): a chat turn makes at most 2 agent → documents calls,
// counted on the real documents server of the test stack by its own per-RPC metrics
// (redline_grpc_server_handled_total). During a sync turn nothing else calls DocumentsService:
// sessions does only for its workspace workflows, ingest only DocumentLibraryService.
import { metricsRegistry } from "@redline/service-kit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startStackWithKey } from "./support/file-stack.js";
import { sampleContract } from "./support/fixtures.js";
import type { TestStack } from "./support/stack.js";

interface ChatBody {
  session_id: string;
  document_changes?: { version_id: string; document_id: string; chunk_diffs: { chunk_id: string }[] };
}

let stack: TestStack;
let key: string;

beforeAll(async () => {
  ({ stack, key } = await startStackWithKey({ name: "chat_calls" }, "carol"));
});
afterAll(() => stack?.close());

const DOCUMENTS_SERVICE = "redline.documents.v1.DocumentsService";

/** DocumentsService calls answered so far, by method. */
async function documentsCalls(): Promise<Map<string, number>> {
  const metric = metricsRegistry.getSingleMetric("redline_grpc_server_handled_total");
  const calls = new Map<string, number>();
  for (const v of (await metric?.get())?.values ?? []) {
    if (v.labels.grpc_service !== DOCUMENTS_SERVICE) continue;
    const method = String(v.labels.grpc_method);
    calls.set(method, (calls.get(method) ?? 0) + v.value);
  }
  return calls;
}

/** Runs a chat turn and returns its body with the DocumentsService calls it made, by method. */
async function countedChat(body: Record<string, unknown>): Promise<{ body: ChatBody; calls: Record<string, number> }> {
  const before = await documentsCalls();
  const res = await stack.call("POST", "/v1/chat", { key, body });
  const answer = (await res.json()) as ChatBody;
  expect(res.status, JSON.stringify(answer)).toBe(200);
  const calls: Record<string, number> = {};
  for (const [method, n] of await documentsCalls()) {
    if (n > (before.get(method) ?? 0)) calls[method] = n - (before.get(method) ?? 0);
  }
  return { body: answer, calls };
}

const total = (calls: Record<string, number>) => Object.values(calls).reduce((a, b) => a + b, 0);

async function checkpoints(sessionId: string): Promise<Map<number, string | undefined>> {
  const res = await stack.call("GET", `/v1/sessions/${sessionId}/history`, { key });
  const h = (await res.json()) as { messages: { turn_index: number; sender: string; checkpoint_id?: string }[] };
  return new Map(h.messages.filter((m) => m.sender === "user").map((m) => [m.turn_index, m.checkpoint_id]));
}

describe("agent → documents calls of one chat turn", () => {
  it("a turn that loads and edits a new document: one CommitTurn", async () => {
    const { body, calls } = await countedChat({
      message: 'replace "Acme Corporation" with "Globex Inc"',
      document_html: sampleContract(),
    });
    expect(body.document_changes?.chunk_diffs).toHaveLength(1);
    expect(calls).toEqual({ CommitTurn: 1 });
  });

  it("a turn that loads into a stored document and edits it: one call, the replaced head is its checkpoint", async () => {
    const first = await countedChat({
      message: 'replace "Acme Corporation" with "Globex Inc"',
      document_html: sampleContract(),
    });
    const sid = first.body.session_id;
    const documentId = first.body.document_changes?.document_id;
    const headBefore = first.body.document_changes?.version_id;
    const { body, calls } = await countedChat({
      session_id: sid,
      document_id: documentId,
      message: 'replace "Acme Corporation" with "Initech"',
      document_html: sampleContract(),
    });
    expect(body.document_changes?.document_id).toBe(documentId);
    expect(body.document_changes?.chunk_diffs).toHaveLength(1);
    expect(total(calls)).toBeLessThanOrEqual(2);
    expect(calls).toEqual({ CommitTurn: 1 });
    expect((await checkpoints(sid)).get(1)).toBe(headBefore);
  });

  it("a turn that edits the stored document: its read and one CommitTurn", async () => {
    const first = await countedChat({
      message: 'replace "Acme Corporation" with "Globex Inc"',
      document_html: sampleContract(),
    });
    const sid = first.body.session_id;
    const { body, calls } = await countedChat({ session_id: sid, message: 'make "thirty (30) days" italic' });
    expect(body.document_changes?.chunk_diffs).toHaveLength(1);
    expect(calls).toEqual({ GetDocument: 1, CommitTurn: 1 });
    expect((await checkpoints(sid)).get(1)).toBe(first.body.document_changes?.version_id);
  });
});
