// SQL of sessions and their message history. Every statement names the owner with the session
// id: ids are scoped per owner (interface-spec.md, Session).
import type { Knex } from "@redline/service-kit";
import { type MessageRow, type RosterRow, type SessionRow, T } from "../tables.js";

/** A connection or the caller's transaction; stores never open transactions. */
export type Db = Knex | Knex.Transaction;

/** Open slots, focused first then in tab order. */
const ROSTER_ORDER = [
  { column: "focused", order: "desc" },
  { column: "position", order: "asc" },
] as const;

/** The owner's session row, or undefined. */
export async function findSession(db: Db, ownerId: string, sessionId: string): Promise<SessionRow | undefined> {
  return db<SessionRow>(T.sessions).where({ id: sessionId, owner_id: ownerId }).first();
}

/** The owner's session row locked for update (attaches, turns and reverts serialize on it). */
export async function lockSessionRow(
  trx: Knex.Transaction,
  ownerId: string,
  sessionId: string,
): Promise<SessionRow | undefined> {
  return trx<SessionRow>(T.sessions).where({ id: sessionId, owner_id: ownerId }).forUpdate().first();
}

/** Sets the session's updated_at to now. */
export async function touchSession(db: Db, ownerId: string, sessionId: string): Promise<void> {
  await db(T.sessions).where({ owner_id: ownerId, id: sessionId }).update({ updated_at: db.fn.now() });
}

/** The session's open slots, focused first then by position. */
export async function openRoster(db: Db, ownerId: string, sessionId: string): Promise<RosterRow[]> {
  return db<RosterRow>(T.roster)
    .where({ owner_id: ownerId, session_id: sessionId })
    .whereNull("closed_at")
    .orderBy([...ROSTER_ORDER]);
}

/** Active messages of the session (two per turn). */
export async function activeMessageCount(db: Db, ownerId: string, sessionId: string): Promise<number> {
  const [row] = await db(T.messages)
    .where({ owner_id: ownerId, session_id: sessionId, active: true })
    .count<{ count: string }[]>("* as count");
  return Number(row?.count ?? 0);
}

/** The owner's sessions by most recent activity: `limit` of them after the first `offset`. */
export async function recentSessions(db: Db, ownerId: string, limit: number, offset = 0): Promise<SessionRow[]> {
  return db<SessionRow>(T.sessions)
    .where({ owner_id: ownerId })
    .orderBy([
      { column: "updated_at", order: "desc" },
      { column: "id", order: "asc" },
    ])
    .limit(limit)
    .offset(offset);
}

/** Active message counts of several sessions, by session id (one grouped query). */
export async function activeMessageCounts(db: Db, ownerId: string, ids: string[]): Promise<Map<string, number>> {
  const rows = await db(T.messages)
    .select("session_id")
    .count<{ session_id: string; count: string }[]>("* as count")
    .where({ owner_id: ownerId, active: true })
    .whereIn("session_id", ids)
    .groupBy("session_id");
  return new Map(rows.map((c) => [c.session_id, Number(c.count)]));
}

/** Open slots of several sessions, focused first then by position (one query). */
export async function openRosters(db: Db, ownerId: string, ids: string[]): Promise<RosterRow[]> {
  return db<RosterRow>(T.roster)
    .where({ owner_id: ownerId })
    .whereIn("session_id", ids)
    .whereNull("closed_at")
    .orderBy([...ROSTER_ORDER]);
}

/** Active messages of a session in conversation order (user before ai within a turn). */
export async function activeMessages(db: Db, ownerId: string, sessionId: string): Promise<MessageRow[]> {
  return db<MessageRow>(T.messages)
    .where({ owner_id: ownerId, session_id: sessionId, active: true })
    .orderBy([
      { column: "turn_index", order: "asc" },
      { column: "created_at", order: "asc" },
      { column: "sender", order: "desc" },
    ]);
}

type JsonRoster = (Omit<RosterRow, "opened_at" | "closed_at"> & { opened_at: string; closed_at: string | null })[];

/** Roster rows as `json_agg` returns them: timestamps come back as strings. */
function rosterFromJson(rows: JsonRoster): RosterRow[] {
  return rows.map((r) => ({
    ...r,
    opened_at: new Date(r.opened_at),
    closed_at: r.closed_at ? new Date(r.closed_at) : null,
  }));
}

/** A session read with its open roster and active message count. */
export interface EnsuredSession {
  row: SessionRow;
  roster: RosterRow[];
  messageCount: number;
  created: boolean;
}

/**
 * Creates the session when missing and reads it with its open roster and message count, in one
 * round trip (every chat turn runs it). `extra` adds select-list items evaluated against `s`.
 * Undefined only if the session was deleted between the insert's check and the read.
 */
async function ensureSessionStatement(
  db: Knex,
  ownerId: string,
  id: string,
  extra: { sql: string; bindings: unknown[] },
): Promise<{ session: EnsuredSession; extra: Record<string, unknown> } | undefined> {
  const res = await db.raw<{ rows: (SessionRow & Record<string, unknown>)[] }>(
    `with ins as (
       insert into ${T.sessions} (id, owner_id) values (?, ?) on conflict (owner_id, id) do nothing returning *
     ),
     s as (
       select * from ins
       union all
       select * from ${T.sessions} where owner_id = ? and id = ? and not exists (select 1 from ins)
     )
     select s.*,
            exists (select 1 from ins) as created,
            (select count(*) from ${T.messages} m
              where m.owner_id = s.owner_id and m.session_id = s.id and m.active)::int as message_count,
            coalesce((select json_agg(r order by r.focused desc, r.position asc)
                        from ${T.roster} r
                       where r.owner_id = s.owner_id and r.session_id = s.id and r.closed_at is null), '[]'::json) as roster
            ${extra.sql}
       from s`,
    [id, ownerId, ownerId, id, ...extra.bindings],
  );
  const found = res.rows[0];
  if (!found) return undefined;
  const { id: sid, owner_id, title, next_turn_index, created_at, updated_at } = found;
  return {
    session: {
      row: { id: sid, owner_id, title, next_turn_index, created_at, updated_at },
      roster: rosterFromJson(found.roster as JsonRoster),
      messageCount: Number(found.message_count),
      created: Boolean(found.created),
    },
    extra: found,
  };
}

/** Gets or creates the owner's session `id` with its open roster and message count. */
export async function ensureSessionRow(db: Knex, ownerId: string, id: string): Promise<EnsuredSession | undefined> {
  return (await ensureSessionStatement(db, ownerId, id, { sql: "", bindings: [] }))?.session;
}

/**
 * ensureSessionRow plus the last `historyLimit` active messages (in order) and the memory note
 * `memoryKey` ("" when none), in the same single statement.
 */
export async function ensureSessionWithHistory(
  db: Knex,
  ownerId: string,
  id: string,
  historyLimit: number,
  memoryKey: string,
): Promise<{ session: EnsuredSession; messages: MessageRow[]; memoryNote: string } | undefined> {
  const res = await ensureSessionStatement(db, ownerId, id, {
    sql: `,
      coalesce((select json_agg(h order by h.turn_index asc, h.created_at asc, h.sender desc)
                  from (select * from ${T.messages} m
                         where m.owner_id = s.owner_id and m.session_id = s.id and m.active
                         order by m.turn_index desc, m.created_at desc, m.sender asc limit ?) h), '[]'::json) as history,
      (select note from ${T.memory} where owner_id = ? and memory_key = ?) as memory_note`,
    bindings: [historyLimit, ownerId, memoryKey],
  });
  if (!res) return undefined;
  const history = res.extra.history as (Omit<MessageRow, "created_at"> & { created_at: string })[];
  return {
    session: res.session,
    messages: history.map((m) => ({ ...m, created_at: new Date(m.created_at) })),
    memoryNote: (res.extra.memory_note as string | null) ?? "",
  };
}

/**
 * Locks the owner's session row and reads its whole roster (closed slots too) and the memory
 * note `memoryKey`; undefined for an unknown or foreign session.
 */
export async function lockSessionWithRoster(
  trx: Knex.Transaction,
  ownerId: string,
  sessionId: string,
  memoryKey: string,
): Promise<{ roster: RosterRow[]; note: string | null } | undefined> {
  const res = await trx.raw<{ rows: { roster: JsonRoster; note: string | null }[] }>(
    `select coalesce((select json_agg(r) from ${T.roster} r
                       where r.owner_id = s.owner_id and r.session_id = s.id), '[]'::json) as roster,
            (select note from ${T.memory} where owner_id = s.owner_id and memory_key = ?) as note
       from ${T.sessions} s
      where s.id = ? and s.owner_id = ?
        for update of s`,
    [memoryKey, sessionId, ownerId],
  );
  const row = res.rows[0];
  return row && { roster: rosterFromJson(row.roster), note: row.note };
}
