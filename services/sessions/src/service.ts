// The sessions service as a library: build from config, start, close. main.ts is the thin shell.
import { sessionsV1 } from "@redline/grpc-stubs";
import {
  bindService,
  type CallContext,
  createDb,
  createLogger,
  healthService,
  type Knex,
  migrateLatest,
  pingDb,
  requirePrincipal,
  startGrpcServer,
} from "@redline/service-kit";
import {
  appendTurn,
  attachDocument,
  ensureSession,
  getHistory,
  getSession,
  listSessions,
  type SessionView,
} from "./commands/sessions.js";
import { migrations, SCHEMA } from "./migrations.js";
import type { RosterRow } from "./tables.js";

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
      return {
        session: session(view),
        messages: messages.map((m) => ({
          id: m.id,
          sender: m.sender,
          content: m.content,
          timestamp: m.created_at,
          turnIndex: m.turn_index,
          checkpointId: m.checkpoint_id,
        })),
      };
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
    [sessionsHandlers(db), healthService({ postgres: () => pingDb(db) })],
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
