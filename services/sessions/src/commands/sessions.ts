// Sessions: ensure (get or create), read, list, and the reads a chat turn starts with.
import { randomBytes } from "node:crypto";
import { type Knex, NotFoundError } from "@redline/service-kit";
import {
  activeMessageCount,
  activeMessageCounts,
  activeMessages,
  type Db,
  type EnsuredSession,
  ensureSessionRow,
  ensureSessionWithHistory,
  findSession,
  openRoster,
  openRosters,
  recentSessions,
} from "../db/store/sessions.js";
import type { MessageRow, RosterRow, SessionRow } from "../db/tables.js";

/** A session with its open roster (focused first) and active message count. */
export interface SessionView {
  row: SessionRow;
  roster: RosterRow[];
  messageCount: number;
}

const newSessionId = () => `sess_${randomBytes(12).toString("hex")}`;

function ensured(found: EnsuredSession | undefined): { view: SessionView; created: boolean } {
  // Only reachable if the session was deleted between the insert's check and the read.
  if (!found) throw new NotFoundError("Session not found");
  const { created, ...view } = found;
  return { view, created };
}

/** The owner's session or NotFoundError (unknown and foreign ids read alike). */
export async function getSession(db: Db, ownerId: string, sessionId: string): Promise<SessionView> {
  const row = await findSession(db, ownerId, sessionId);
  if (!row) throw new NotFoundError("Session not found");
  const [roster, count] = await Promise.all([openRoster(db, ownerId, row.id), activeMessageCount(db, ownerId, row.id)]);
  return { row, roster, messageCount: count };
}

/**
 * Gets or creates the owner's session `sessionId` (minted when empty). Ids are scoped per owner
 * (interface-spec.md, Session): another owner's session with the same id is a different session,
 * neither read nor revealed.
 */
export async function ensureSession(
  db: Knex,
  ownerId: string,
  sessionId: string,
): Promise<{ view: SessionView; created: boolean }> {
  return ensured(await ensureSessionRow(db, ownerId, sessionId || newSessionId()));
}

/** What a chat turn reads before its engine runs. */
export interface TurnContext {
  view: SessionView;
  created: boolean;
  /** The last `historyLimit` active messages, in order. */
  messages: MessageRow[];
  memoryNote: string;
}

/**
 * ensureSession plus the last `historyLimit` (0..500) active messages and the memory note
 * `memoryKey`, in the same single statement.
 */
export async function getTurnContext(
  db: Knex,
  ownerId: string,
  input: { sessionId: string; historyLimit: number; memoryKey: string },
): Promise<TurnContext> {
  const limit = Math.max(0, Math.min(500, input.historyLimit));
  const res = await ensureSessionWithHistory(db, ownerId, input.sessionId || newSessionId(), limit, input.memoryKey);
  return { ...ensured(res?.session), messages: res?.messages ?? [], memoryNote: res?.memoryNote ?? "" };
}

/**
 * The owner's sessions, most recent activity first: at most `page.limit` (default 50, clamped to
 * 1..200) after the first `page.offset` (negative reads as 0).
 */
export async function listSessions(
  db: Knex,
  ownerId: string,
  page: { limit: number; offset?: number },
): Promise<SessionView[]> {
  const limit = Math.min(200, Math.max(1, page.limit || 50));
  const rows = await recentSessions(db, ownerId, limit, Math.max(0, page.offset ?? 0));
  if (rows.length === 0) return [];
  const ids = rows.map((r) => r.id);
  // Two grouped queries instead of two per session.
  const [counts, roster] = await Promise.all([activeMessageCounts(db, ownerId, ids), openRosters(db, ownerId, ids)]);
  return rows.map((row) => ({
    row,
    roster: roster.filter((r) => r.session_id === row.id),
    messageCount: counts.get(row.id) ?? 0,
  }));
}

/** The active history in order (user before ai within a turn). NotFoundError for a foreign session. */
export async function getHistory(
  db: Knex,
  ownerId: string,
  sessionId: string,
): Promise<{ view: SessionView; messages: MessageRow[] }> {
  const view = await getSession(db, ownerId, sessionId);
  return { view, messages: await activeMessages(db, ownerId, sessionId) };
}
