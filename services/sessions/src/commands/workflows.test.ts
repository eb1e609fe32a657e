// The workspace workflows against the real documents service (started here) and real Postgres;
// the archive conflict is also checked through the sessions gRPC server, as the gateway sees it.
import { startDocumentsService } from "@redline/documents";
import { sessionsWorkspaceV1 } from "@redline/grpc-stubs";
import { type CallOpts, ConflictError, createRpcClient, NotFoundError, type Principal } from "@redline/service-kit";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { createContext, type SessionsContext } from "../context.js";
import { type RunningSessionsService, startSessionsService } from "../service.js";
import { sessionsTestDb } from "../testing.js";
import { openBlank, openDocuments } from "./roster.js";
import { ensureSession, getSession } from "./sessions.js";
import { archiveDocument, saveToSlot, storeAndAttach, unarchiveInSession } from "./workflows.js";

let ctx: SessionsContext;
let sessions: RunningSessionsService;
let closeDocuments: () => Promise<void>;
beforeAll(async () => {
  const { db, url } = await sessionsTestDb("workflows");
  const docs = await startDocumentsService({
    grpcAddress: "127.0.0.1:0",
    databaseUrl: url,
    natsUrl: inject("infra").natsUrl,
    logLevel: "silent",
  });
  closeDocuments = () => docs.close();
  const cfg = {
    grpcAddress: "127.0.0.1:0",
    databaseUrl: url,
    natsUrl: inject("infra").natsUrl,
    // Test files share one NATS: a durable consumer of their own.
    webhooks: { consumer: `webhooks-workflows-${Date.now().toString(36)}` },
    addrs: { documents: docs.address },
    logLevel: "silent",
  };
  ctx = createContext(cfg, { db });
  sessions = await startSessionsService(cfg);
});
afterAll(async () => {
  await sessions?.close();
  ctx?.documents.close();
  ctx?.library.close();
  await ctx?.db.destroy();
  await closeDocuments?.();
});

let n = 0;
/** A fresh caller: the documents service scopes rows by the principal's owner id. */
function caller(): { owner: string; fwd: CallOpts } {
  const ownerId = `user_wf_${++n}_${Date.now()}`;
  const principal: Principal = { userId: ownerId, organizationId: "", ownerId, plan: "pro" };
  return { owner: ownerId, fwd: { principal, timeoutMs: 30_000 } };
}

const upload = (openMode: string, html: string) => ({
  sessionId: "",
  openMode,
  html,
  title: "",
  keepParts: false,
});

describe("storeAndAttach", () => {
  it("creates a session and a focused document, then replaces the focused one in place", async () => {
    const { owner, fwd } = caller();
    const first = await storeAndAttach(ctx, owner, fwd, upload("new_focused", "<h1>Lease</h1><p>One.</p>"));
    expect(first.sessionId).toMatch(/^sess_/);
    expect(first.roster.map((r) => [r.slot_id, r.focused])).toEqual([[first.slotId, true]]);
    const input = { ...upload("replace", "<h1>Lease</h1><p>Two.</p>"), sessionId: first.sessionId };
    const replaced = await storeAndAttach(ctx, owner, fwd, input);
    expect([replaced.meta.documentId, replaced.slotId]).toEqual([first.meta.documentId, first.slotId]);
    expect(replaced.meta.versionId).not.toBe(first.meta.versionId);
    const background = await storeAndAttach(ctx, owner, fwd, { ...input, openMode: "background" });
    expect(background.roster.find((r) => r.focused)?.document_id).toBe(first.meta.documentId);
    expect(background.html).toContain("Two.");
  });
});

describe("saveToSlot", () => {
  it("creates the document on a blank tab's first save, then merges later saves and marks them seen", async () => {
    const { owner, fwd } = caller();
    await ensureSession(db(), owner, "save");
    const blank = await openBlank(db(), owner, { sessionId: "save", title: "" });
    const base = { sessionId: "save", documentRef: blank.entry.slot_id, baseVersionId: "", editorActions: [] };
    const created = await saveToSlot(ctx, owner, fwd, { ...base, html: "<p>First.</p>" });
    expect([created.saved.created, created.saved.merged]).toEqual([true, false]);
    const action = { action: "font", value: "Arial", documentId: "", chunkIds: [], details: null };
    const later = await saveToSlot(ctx, owner, fwd, { ...base, html: "<p>Second.</p>", editorActions: [action] });
    expect([later.saved.created, later.saved.durableId]).toEqual([false, created.saved.durableId]);
    const { roster } = await getSession(db(), owner, "save");
    expect(roster[0].last_seen_version_id).toBe(later.saved.versionId);
    await expect(saveToSlot(ctx, owner, fwd, { ...base, documentRef: "doc_none", html: "" })).rejects.toBeInstanceOf(
      NotFoundError,
    );
  });
});

describe("archiveDocument and unarchiveInSession", () => {
  it("refuses while open elsewhere, archives with force and unlinks, then restores into a session", async () => {
    const { owner, fwd } = caller();
    const stored = await storeAndAttach(ctx, owner, fwd, { ...upload("new_focused", "<p>Deed.</p>"), sessionId: "a1" });
    const id = stored.meta.documentId;
    await ensureSession(db(), owner, "a2");
    await openDocuments(db(), owner, {
      sessionId: "a2",
      documents: [{ durableDocumentId: id, title: "", versionId: "" }],
    });
    const refused = archiveDocument(ctx, owner, fwd, { documentId: id, fromSession: "a1", force: false });
    await expect(refused).rejects.toBeInstanceOf(ConflictError);
    const done = await archiveDocument(ctx, owner, fwd, { documentId: id, fromSession: "a1", force: true });
    expect([done.alreadyArchived, done.unlinkedSessions]).toEqual([false, 2]);
    // Rule 10: archiving it again archives nothing, so it is a 409 naming why, never a success.
    const again = await archiveDocument(ctx, owner, fwd, { documentId: id, fromSession: "a1", force: true }).catch(
      (e: unknown) => e,
    );
    expect(again).toBeInstanceOf(ConflictError);
    expect((again as ConflictError).toPayload().body).toMatchObject({ code: "already_archived" });
    const restored = await unarchiveInSession(ctx, owner, fwd, {
      sessionId: "a2",
      documentRef: id,
      html: "<p>Deed, amended.</p>",
      baseVersionId: "",
      editorActions: [],
    });
    expect([restored.found, restored.unarchived, restored.durableId]).toEqual([true, true, id]);
    expect(restored.view.roster.find((r) => r.focused)?.document_id).toBe(id);
    const unknown = { sessionId: "a2", documentRef: crypto.randomUUID(), baseVersionId: "", editorActions: [] };
    expect((await unarchiveInSession(ctx, owner, fwd, unknown)).found).toBe(false);
    await expect(
      archiveDocument(ctx, caller().owner, caller().fwd, { documentId: id, fromSession: "", force: true }),
    ).rejects.toBeInstanceOf(NotFoundError);
  });

  it("carries the 409 document_in_use body across the gRPC boundary", async () => {
    const { owner, fwd } = caller();
    const stored = await storeAndAttach(ctx, owner, fwd, { ...upload("new_focused", "<p>X.</p>"), sessionId: "g1" });
    const client = createRpcClient(sessionsWorkspaceV1.SessionWorkspaceServiceService, sessions.address);
    try {
      const req = { durableDocumentId: stored.meta.documentId, fromSession: "other", force: false };
      const err = await client.archiveDocument(req, fwd).catch((e: unknown) => e);
      expect(err).toMatchObject({
        httpStatus: 409,
        body: {
          code: "document_in_use",
          open_in_sessions: 1,
          suggested_action: "close_in_other_sessions_or_retry_with_force",
        },
      });
    } finally {
      client.close();
    }
  });
});

function db() {
  return ctx.db;
}
