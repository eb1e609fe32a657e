// Small helpers of the document and roster system tests: JSON calls through the gateway, and
// documents created the way a client would (a blank tab saved, or a chat that loads HTML).
import type { TestStack } from "./stack.js";

/** A JSON answer: status and parsed body. */
export interface JsonReply<T = Record<string, unknown>> {
  status: number;
  body: T;
}

// Test bodies are read field by field; a loose record keeps the assertions short.
// biome-ignore lint/suspicious/noExplicitAny: parsed JSON of the API under test
export type Body = Record<string, any>;

/** Calls the gateway and parses the JSON body. */
export async function jsonCall(
  stack: TestStack,
  method: string,
  path: string,
  key: string,
  body?: unknown,
): Promise<JsonReply<Body>> {
  const res = await stack.call(method, path, { key, body });
  const text = await res.text();
  return { status: res.status, body: text ? (JSON.parse(text) as Body) : {} };
}

/** A session with one blank tab saved as `html`: the durable document and the session. */
export async function createSavedDocument(
  stack: TestStack,
  key: string,
  html: string,
  sessionId?: string,
): Promise<{ sessionId: string; documentId: string; slotId: string; versionId: string; html: string }> {
  const init = await jsonCall(stack, "POST", "/v1/sessions/init", key, sessionId ? { session_id: sessionId } : {});
  if (init.status !== 200) throw new Error(`init ${init.status} ${JSON.stringify(init.body)}`);
  const sid = init.body.session_id as string;
  const blank = await jsonCall(stack, "POST", `/v1/sessions/${sid}/documents/blank`, key);
  if (blank.status !== 200) throw new Error(`blank ${blank.status} ${JSON.stringify(blank.body)}`);
  const slot = blank.body.document.document_id as string;
  const saved = await jsonCall(stack, "POST", `/v1/sessions/${sid}/documents/${slot}/save`, key, { html });
  if (saved.status !== 200) throw new Error(`save ${saved.status} ${JSON.stringify(saved.body)}`);
  return {
    sessionId: sid,
    documentId: saved.body.durable_document_id,
    slotId: slot,
    versionId: saved.body.version_id,
    html: saved.body.html,
  };
}

/** Replaces the text of one chunk's HTML (the chunk keeps its tag and id). */
export function editChunk(html: string, chunkId: string, from: string, to: string): string {
  const parts = html.split("\n");
  return parts.map((part) => (part.includes(`data-chunk-id="${chunkId}"`) ? part.replace(from, to) : part)).join("\n");
}
