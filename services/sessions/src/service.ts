// The sessions service as a library: build from config, start, close. main.ts is the thin shell.
import { sessionsV1, sessionsWorkspaceV1 } from "@redline/grpc-stubs";
import {
  bindService,
  type CallContext,
  createDb,
  createLogger,
  healthService,
  InputError,
  type Knex,
  migrateLatest,
  pingDb,
  requirePrincipal,
  startGrpcServer,
} from "@redline/service-kit";
import { checkpointsHandlers } from "./checkpoints-handlers.js";
import { clearMemoryNote } from "./commands/memory.js";
import {
  appendTurn,
  attachDocument,
  ensureSession,
  getHistory,
  getSession,
  getTurnContext,
  listSessions,
  type SessionView,
} from "./commands/sessions.js";
import {
  closeDocument,
  focusDocument,
  listDocumentHolders,
  listEditorActions,
  listWatchedDocuments,
  markSeen,
  openBlank,
  openDocuments,
  recordEditorActions,
  resolveDocument,
  unlinkDocument,
} from "./commands/workspace.js";
import { migrations, SCHEMA } from "./migrations.js";
import type { EditorActionRow, MessageRow, RosterRow } from "./tables.js";

/** Sessions configuration. */
export interface SessionsConfig {
  grpcAddress: string;
  databaseUrl: string;
  logLevel?: string;
}

/** A started service; `db` is exposed for benchmarks that compare against Postgres. */
export interface RunningSessionsService {
  address: string;
  db: Knex;
  close(): Promise<void>;
}

function ownerOf(ctx: CallContext): string {
  return requirePrincipal(ctx).ownerId;
}

function entry(r: RosterRow): sessionsV1.RosterEntry {
  return {
    documentId: r.slot_id,
    durableDocumentId: r.document_id ?? "",
    title: r.title,
    focused: r.focused,
    lastSeenVersionId: r.last_seen_version_id,
    openedAt: r.opened_at,
  };
}

function session(v: SessionView): sessionsV1.Session {
  const focused = v.roster.find((r) => r.focused);
  return {
    sessionId: v.row.id,
    createdAt: v.row.created_at,
    updatedAt: v.row.updated_at,
    messageCount: v.messageCount,
    title: v.row.title || focused?.title || "",
    roster: v.roster.map(entry),
  };
}

function message(m: MessageRow): sessionsV1.Message {
  return {
    id: m.id,
    sender: m.sender,
    content: m.content,
    timestamp: m.created_at,
    turnIndex: m.turn_index,
    checkpointId: m.checkpoint_id,
  };
}

/** Handlers of sessions.v1.SessionsService. */
export function sessionsHandlers(db: Knex) {
  return bindService(sessionsV1.SessionsServiceService, {
    async ensureSession(req, ctx) {
      const { view, created } = await ensureSession(db, ownerOf(ctx), req.sessionId);
      return { session: session(view), created };
    },
    async getSession(req, ctx) {
      return { session: session(await getSession(db, ownerOf(ctx), req.sessionId)) };
    },
    async listSessions(req, ctx) {
      return { sessions: (await listSessions(db, ownerOf(ctx), req.limit)).map(session) };
    },
    async attachDocument(req, ctx) {
      const row = await attachDocument(db, ownerOf(ctx), {
        sessionId: req.sessionId,
        durableDocumentId: req.durableDocumentId,
        title: req.title,
        focus: req.focus,
        versionId: req.versionId,
        slotId: req.slotId || undefined,
      });
      return { entry: entry(row) };
    },
    async appendTurn(req, ctx) {
      return { turnIndex: await appendTurn(db, ownerOf(ctx), req) };
    },
    async getHistory(req, ctx) {
      const { view, messages } = await getHistory(db, ownerOf(ctx), req.sessionId);
      return { session: session(view), messages: messages.map(message) };
    },
    async getTurnContext(req, ctx) {
      const turn = await getTurnContext(db, ownerOf(ctx), req);
      return {
        session: session(turn.view),
        created: turn.created,
        messages: turn.messages.map(message),
        memoryNote: turn.memoryNote,
      };
    },
  });
}

function editorAction(r: EditorActionRow): sessionsWorkspaceV1.EditorAction {
  return {
    id: String(r.id),
    action: r.action,
    value: r.value,
    documentId: r.document_id,
    chunkIds: r.chunk_ids,
    detailsJson: r.details ? JSON.stringify(r.details) : "",
    createdAt: r.created_at,
  };
}

function parseDetails(json: string): Record<string, unknown> | null {
  if (!json) return null;
  try {
    const value = JSON.parse(json);
    if (value !== null && typeof value === "object" && !Array.isArray(value)) return value as Record<string, unknown>;
  } catch {
    // Reported below.
  }
  throw new InputError("editor action details must be a JSON object");
}

/** Handlers of sessions.v1.SessionWorkspaceService. */
export function workspaceHandlers(db: Knex) {
  return bindService(sessionsWorkspaceV1.SessionWorkspaceServiceService, {
    async openDocuments(req, ctx) {
      const { view, opened } = await openDocuments(db, ownerOf(ctx), {
        sessionId: req.sessionId,
        documents: req.documents.map((d) => ({
          durableDocumentId: d.durableDocumentId,
          title: d.title,
          versionId: d.versionId,
        })),
      });
      return { session: session(view), opened: opened.map(entry) };
    },
    async openBlank(req, ctx) {
      const { view, entry: row } = await openBlank(db, ownerOf(ctx), req);
      return { session: session(view), entry: entry(row) };
    },
    async resolveDocument(req, ctx) {
      return { entry: entry(await resolveDocument(db, ownerOf(ctx), req)) };
    },
    async focusDocument(req, ctx) {
      const { view, entry: row } = await focusDocument(db, ownerOf(ctx), req);
      return { session: session(view), entry: entry(row) };
    },
    async closeDocument(req, ctx) {
      const { view, closed } = await closeDocument(db, ownerOf(ctx), req);
      return { session: session(view), closed: entry(closed) };
    },
    async markSeen(req, ctx) {
      return { entry: entry(await markSeen(db, ownerOf(ctx), req)) };
    },
    async listDocumentHolders(req, ctx) {
      const holders = await listDocumentHolders(db, ownerOf(ctx), {
        documentIds: req.durableDocumentIds,
        excludeSessionId: req.excludeSessionId,
      });
      return {
        holders: holders.map((h) => ({
          durableDocumentId: h.document_id,
          sessionId: h.session_id,
          sessionTitle: h.session_title,
          slotId: h.slot_id,
          updatedAt: h.updated_at,
        })),
      };
    },
    async unlinkDocument(req, ctx) {
      return { sessionIds: await unlinkDocument(db, ownerOf(ctx), req.durableDocumentId) };
    },
    async listWatchedDocuments(req, ctx) {
      const documents = await listWatchedDocuments(db, ownerOf(ctx), req.sessionId);
      return { documents: documents.map((d) => ({ durableDocumentId: d.documentId, slotId: d.slotId })) };
    },
    async recordEditorActions(req, ctx) {
      const rows = await recordEditorActions(
        db,
        ownerOf(ctx),
        req.sessionId,
        req.actions.map((a) => ({
          action: a.action,
          value: a.value,
          documentId: a.documentId,
          chunkIds: a.chunkIds,
          details: parseDetails(a.detailsJson),
        })),
      );
      return { actions: rows.map(editorAction) };
    },
    async listEditorActions(req, ctx) {
      return { actions: (await listEditorActions(db, ownerOf(ctx), req.sessionId)).map(editorAction) };
    },
    async clearMemoryNote(req, ctx) {
      return { removed: await clearMemoryNote(db, ownerOf(ctx), req.memoryKey) };
    },
  });
}

/** Migrates the sessions schema and serves SessionsService and Health. */
export async function startSessionsService(cfg: SessionsConfig): Promise<RunningSessionsService> {
  const log = createLogger("sessions", cfg.logLevel);
  const db = createDb(cfg.databaseUrl, SCHEMA);
  await migrateLatest(db, SCHEMA, migrations);
  const server = await startGrpcServer(
    cfg.grpcAddress,
    [
      sessionsHandlers(db),
      workspaceHandlers(db),
      checkpointsHandlers(db),
      healthService({ postgres: () => pingDb(db) }),
    ],
    log,
  );
  log.info({ address: server.address }, "sessions listening");
  return {
    address: server.address,
    db,
    async close() {
      await server.close();
      await db.destroy();
    },
  };
}
