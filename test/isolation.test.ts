// The isolation matrix: every endpoint of the documents, rosters, sync and memory issue, called
// by tenant A with tenant B's session, slot, chunk and document ids, answers 403 or 404 (or, for
// the unarchive forms, the spec's no-op success for an id the caller does not know) and never a
// byte of B's data; afterwards B's document, roster and memory note are exactly as they were.
// Session ids are scoped per owner, so init with B's session id gives A a session of its own.
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { type Body, createSavedDocument, jsonCall } from "./support/documents-client.js";
import { startTestStack, type TestStack } from "./support/stack.js";

let stack: TestStack;
let keyA: string;
let keyB: string;
const SECRET = "SECRET-of-tenant-B";
let b: Awaited<ReturnType<typeof createSavedDocument>>;
let a: Awaited<ReturnType<typeof createSavedDocument>>;
let bChunk: string;

beforeAll(async () => {
  stack = await startTestStack(inject("infra"), { name: "isolation" });
  keyA = await stack.createKey("alice-iso", { org: "org-a" });
  keyB = await stack.createKey("bob-iso", { org: "org-b" });
  b = await createSavedDocument(stack, keyB, `<h1>${SECRET} title</h1><p>${SECRET} body.</p>`);
  bChunk = /data-chunk-id="([^"]+)"/.exec(b.html)?.[1] ?? "";
  await jsonCall(stack, "POST", "/v1/chat", keyB, {
    session_id: b.sessionId,
    message: 'replace "body" with "text"',
    cross_session_memory_key: "b-customer",
  });
  a = await createSavedDocument(stack, keyA, "<h1>Alice</h1><p>Alice's text.</p>");
});
afterAll(async () => {
  await stack?.close();
});

type Case = [name: string, method: string, path: () => string, body?: () => unknown];

const foreignSession: Case[] = [
  [
    "open in B's session",
    "POST",
    () => `/v1/sessions/${b.sessionId}/documents/open`,
    () => ({ document_ids: [a.documentId] }),
  ],
  [
    "save in B's session",
    "POST",
    () => `/v1/sessions/${b.sessionId}/documents/${b.slotId}/save`,
    () => ({ html: "<p>x</p>" }),
  ],
  ["session unarchive in B's session", "POST", () => `/v1/sessions/${b.sessionId}/documents/${b.slotId}/unarchive`],
  ["blank tab in B's session", "POST", () => `/v1/sessions/${b.sessionId}/documents/blank`],
  ["roster of B's session", "GET", () => `/v1/sessions/${b.sessionId}/documents?include_html=true`],
  ["doc-events of B's session", "GET", () => `/v1/sessions/${b.sessionId}/doc-events?include_own=true`],
  ["focus in B's session", "POST", () => `/v1/sessions/${b.sessionId}/documents/${b.slotId}/focus`],
  ["close in B's session", "DELETE", () => `/v1/sessions/${b.sessionId}/documents/${b.slotId}`],
  [
    "re-edit in B's session",
    "POST",
    () => `/v1/sessions/${b.sessionId}/chunks/${bChunk}/re-edit`,
    () => ({ mode: "merge" }),
  ],
  ["history of B's session", "GET", () => `/v1/sessions/${b.sessionId}/history`],
  [
    "editor actions in B's session",
    "POST",
    () => `/v1/sessions/${b.sessionId}/editor-actions`,
    () => ({ actions: [{ action: "font", value: "x" }] }),
  ],
];

const foreignDocument: Case[] = [
  ["detail of B's document", "GET", () => `/v1/documents/${b.documentId}?include_html=true`],
  ["rename B's document", "PATCH", () => `/v1/documents/${b.documentId}`, () => ({ title: "stolen" })],
  ["archive B's document", "DELETE", () => `/v1/documents/${b.documentId}?force=true`],
  [
    "open B's document in A's session",
    "POST",
    () => `/v1/sessions/${a.sessionId}/documents/open`,
    () => ({ document_ids: [b.documentId] }),
  ],
  ["init with B's document", "POST", () => "/v1/sessions/init", () => ({ document_ids: [b.documentId] })],
  [
    "save into B's document from A's session",
    "POST",
    () => `/v1/sessions/${a.sessionId}/documents/${b.documentId}/save`,
    () => ({ html: "<p>x</p>" }),
  ],
  ["focus B's document in A's session", "POST", () => `/v1/sessions/${a.sessionId}/documents/${b.documentId}/focus`],
  ["close B's document in A's session", "DELETE", () => `/v1/sessions/${a.sessionId}/documents/${b.documentId}`],
  [
    "re-edit B's chunk from A's session",
    "POST",
    () => `/v1/sessions/${a.sessionId}/chunks/${bChunk}/re-edit`,
    () => ({ mode: "redo", document_id: b.documentId }),
  ],
];

function leaks(body: Body): boolean {
  const text = JSON.stringify(body);
  return text.includes(SECRET) || text.includes(b.versionId) || text.includes(bChunk);
}

describe("isolation matrix", () => {
  for (const [name, method, path, body] of [...foreignSession, ...foreignDocument]) {
    it(`${name}: 403 or 404, nothing of B's`, async () => {
      const res = await jsonCall(stack, method, path(), keyA, body?.());
      expect([403, 404], JSON.stringify(res.body)).toContain(res.status);
      const text = JSON.stringify(res.body);
      expect(text).not.toContain(SECRET);
      expect(text).not.toContain(b.versionId);
    });
  }

  it("both unarchive forms treat B's document id as unknown: a no-op success revealing nothing", async () => {
    const plain = await jsonCall(stack, "POST", `/v1/documents/${b.documentId}/unarchive`, keyA);
    expect(plain.status).toBe(200);
    expect(plain.body).toEqual({ document_id: b.documentId, status: "active", unarchived: false });
    const inSession = await jsonCall(
      stack,
      "POST",
      `/v1/sessions/${a.sessionId}/documents/${b.documentId}/unarchive`,
      keyA,
    );
    expect(inSession.status).toBe(200);
    expect(inSession.body.unarchived).toBe(false);
    expect(leaks(inSession.body)).toBe(false);
    expect(inSession.body.documents.map((d: Body) => d.durable_document_id)).toEqual([a.documentId]);
  });

  it("lists, history, doc-events and memory of A show nothing of B's", async () => {
    for (const path of [
      "/v1/sessions",
      "/v1/documents?include_preview=true",
      "/v1/documents?archived=true",
      `/v1/sessions/${a.sessionId}/history?focus_document_id=${b.documentId}`,
      `/v1/sessions/${a.sessionId}/doc-events?include_own=true`,
      `/v1/sessions/${a.sessionId}/documents?include_html=true&report_changed=true`,
    ]) {
      const res = await jsonCall(stack, "GET", path, keyA);
      expect(res.status, path).toBe(200);
      expect(leaks(res.body), path).toBe(false);
      expect(JSON.stringify(res.body), path).not.toContain(b.documentId);
      expect(JSON.stringify(res.body), path).not.toContain(b.sessionId);
    }
    const memory = await jsonCall(stack, "DELETE", "/v1/users/me/cross-session-memory?memory_key=b-customer", keyA);
    expect(memory.body.removed).toBe(0);
  });

  it("leaves B's document, roster and memory note as they were", async () => {
    const detail = await jsonCall(stack, "GET", `/v1/documents/${b.documentId}?include_html=true`, keyB);
    expect(detail.body).toMatchObject({ status: "active", title: `${SECRET} title` });
    expect(detail.body.html).toContain(`${SECRET} text.`);
    const roster = await jsonCall(stack, "GET", `/v1/sessions/${b.sessionId}/documents`, keyB);
    expect(roster.body.documents.map((d: Body) => d.durable_document_id)).toEqual([b.documentId]);
    const history = await jsonCall(stack, "GET", `/v1/sessions/${b.sessionId}/history`, keyB);
    expect(history.body.editor_actions).toEqual([]);
    const memory = await jsonCall(stack, "DELETE", "/v1/users/me/cross-session-memory?memory_key=b-customer", keyB);
    expect(memory.body.removed).toBe(1);
  });

  // Last: it creates A's own session under B's id, which the matrix above must not find.
  it("init with B's session id: A's own fresh session, nothing of B's, B's untouched", async () => {
    const init = await jsonCall(stack, "POST", "/v1/sessions/init", keyA, { session_id: b.sessionId });
    expect(init.status).toBe(200);
    expect(init.body).toMatchObject({ session_id: b.sessionId, created: true, documents: [] });
    expect(leaks(init.body)).toBe(false);
    const history = await jsonCall(stack, "GET", `/v1/sessions/${b.sessionId}/history`, keyA);
    expect(history.body.messages).toEqual([]);
    const roster = await jsonCall(stack, "GET", `/v1/sessions/${b.sessionId}/documents`, keyB);
    expect(roster.body.documents.map((d: Body) => d.durable_document_id)).toEqual([b.documentId]);
  });
});
