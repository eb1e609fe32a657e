// Sessions, their roster of open documents, and their turns.
import { randomBytes, randomUUID } from "node:crypto";
import { type Knex, NotFoundError } from "@redline/service-kit";
import { SCHEMA } from "../migrations.js";
import type { MessageRow, RosterRow, SessionRow } from "../tables.js";
import { appendMemoryLine, remember, rememberIn } from "./memory.js";

type Db = Knex | Knex.Transaction;
const T = {
  sessions: `${SCHEMA}.sessions`,
  roster: `${SCHEMA}.roster`,
  messages: `${SCHEMA}.messages`,
  memory: `${SCHEMA}.memory_notes`,
};
const TITLE_CHARS = 80;

/** A session with its open roster (focused first) and active message count. */
export interface SessionView {
  row: SessionRow;
  roster: RosterRow[];
  messageCount: number;
}

async function openRoster(db: Db, ownerId: string, sessionId: string): Promise<RosterRow[]> {
  return db<RosterRow>(T.roster)
    .where({ owner_id: ownerId, session_id: sessionId })
    .whereNull("closed_at")
    .orderBy([
      { column: "focused", order: "desc" },
      { column: "position", order: "asc" },
    ]);
}

async function messageCount(db: Db, ownerId: string, sessionId: string): Promise<number> {
  const [row] = await db(T.messages)
    .where({ owner_id: ownerId, session_id: sessionId, active: true })
    .count<{ count: string }[]>("* as count");
  return Number(row?.count ?? 0);
}

async function view(db: Db, row: SessionRow): Promise<SessionView> {
  const [roster, count] = await Promise.all([
    openRoster(db, row.owner_id, row.id),
    messageCount(db, row.owner_id, row.id),
  ]);
  return { row, roster, messageCount: count };
}

/** The owner's session or NotFoundError (unknown and foreign ids read alike). */
export async function getSession(db: Db, ownerId: string, sessionId: string): Promise<SessionView> {
  const row = await db<SessionRow>(T.sessions).where({ id: sessionId, owner_id: ownerId }).first();
  if (!row) throw new NotFoundError("Session not found");
  return view(db, row);
}

/** A roster row as `json_agg` returns it: timestamps come back as strings. */
function rosterFromJson(
  rows: (Omit<RosterRow, "opened_at" | "closed_at"> & { opened_at: string; closed_at: string | null })[],
): RosterRow[] {
  return rows.map((r) => ({
    ...r,
    opened_at: new Date(r.opened_at),
    closed_at: r.closed_at ? new Date(r.closed_at) : null,
  }));
}

/**
 * The statement behind ensureSession and getTurnContext: creates the session when missing and
 * reads it with its open roster and message count, in one round trip (every chat turn runs it).
 * `extra` adds select-list items (with their bindings) evaluated against the session row `s`.
 */
async function ensureSessionRow(
  db: Knex,
  ownerId: string,
  id: string,
  extra: { sql: string; bindings: unknown[] } = { sql: "", bindings: [] },
): Promise<{ view: SessionView; created: boolean; extra: Record<string, unknown> }> {
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
  // Only reachable if the session was deleted between the insert's check and the read.
  if (!found) throw new NotFoundError("Session not found");
  const { created, message_count, roster, ...rest } = found;
  const row: SessionRow = {
    id: found.id,
    owner_id: found.owner_id,
    title: found.title,
    next_turn_index: found.next_turn_index,
    created_at: found.created_at,
    updated_at: found.updated_at,
  };
  return {
    view: {
      row,
      roster: rosterFromJson(roster as Parameters<typeof rosterFromJson>[0]),
      messageCount: Number(message_count),
    },
    created: Boolean(created),
    extra: rest,
  };
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
  const { view, created } = await ensureSessionRow(db, ownerId, sessionId || `sess_${randomBytes(12).toString("hex")}`);
  return { view, created };
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
 * ensureSession plus the last `historyLimit` active messages and the memory note `memoryKey`,
 * in the same single statement.
 */
export async function getTurnContext(
  db: Knex,
  ownerId: string,
  input: { sessionId: string; historyLimit: number; memoryKey: string },
): Promise<TurnContext> {
  const id = input.sessionId || `sess_${randomBytes(12).toString("hex")}`;
  const limit = Math.max(0, Math.min(500, input.historyLimit));
  const { view, created, extra } = await ensureSessionRow(db, ownerId, id, {
    sql: `,
      coalesce((select json_agg(h order by h.turn_index asc, h.created_at asc, h.sender desc)
                  from (select * from ${T.messages} m
                         where m.owner_id = s.owner_id and m.session_id = s.id and m.active
                         order by m.turn_index desc, m.created_at desc, m.sender asc limit ?) h), '[]'::json) as history,
      (select note from ${T.memory} where owner_id = ? and memory_key = ?) as memory_note`,
    bindings: [limit, ownerId, input.memoryKey],
  });
  const history = extra.history as (Omit<MessageRow, "created_at"> & { created_at: string })[];
  return {
    view,
    created,
    messages: history.map((m) => ({ ...m, created_at: new Date(m.created_at) })),
    memoryNote: (extra.memory_note as string | null) ?? "",
  };
}

/** The owner's sessions, most recent activity first, at most `limit` (1..200). */
export async function listSessions(db: Knex, ownerId: string, limit: number): Promise<SessionView[]> {
  const rows = await db<SessionRow>(T.sessions)
    .where({ owner_id: ownerId })
    .orderBy([
      { column: "updated_at", order: "desc" },
      { column: "id", order: "asc" },
    ])
    .limit(Math.min(200, Math.max(1, limit || 50)));
  if (rows.length === 0) return [];
  const ids = rows.map((r) => r.id);
  // Two grouped queries instead of two per session.
  const [counts, roster] = await Promise.all([
    db(T.messages)
      .select("session_id")
      .count<{ session_id: string; count: string }[]>("* as count")
      .where({ owner_id: ownerId, active: true })
      .whereIn("session_id", ids)
      .groupBy("session_id"),
    db<RosterRow>(T.roster)
      .where({ owner_id: ownerId })
      .whereIn("session_id", ids)
      .whereNull("closed_at")
      .orderBy([
        { column: "focused", order: "desc" },
        { column: "position", order: "asc" },
      ]),
  ]);
  const countBy = new Map(counts.map((c) => [c.session_id, Number(c.count)]));
  return rows.map((row) => ({
    row,
    roster: roster.filter((r) => r.session_id === row.id),
    messageCount: countBy.get(row.id) ?? 0,
  }));
}

/** A durable document to put in a session's roster. */
export interface AttachInput {
  sessionId: string;
  durableDocumentId: string;
  title: string;
  focus: boolean;
  versionId: string;
  slotId?: string;
}

/**
 * Locks the owner's session row (attaches and turns of one session serialize on it) and reads
 * its whole roster and the memory note `memoryKey`; undefined for an unknown or foreign session.
 */
async function lockSession(
  trx: Knex.Transaction,
  ownerId: string,
  sessionId: string,
  memoryKey: string,
): Promise<{ roster: RosterRow[]; note: string | null } | undefined> {
  const res = await trx.raw<{ rows: { roster: Parameters<typeof rosterFromJson>[0]; note: string | null }[] }>(
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

/**
 * The roster write of an attach, on a locked session whose roster is `all`: one statement
 * unfocuses the others (with `focus`), upserts the slot and touches the session.
 */
async function attachLocked(
  trx: Knex.Transaction,
  ownerId: string,
  all: RosterRow[],
  input: AttachInput,
): Promise<RosterRow> {
  const existing =
    (input.slotId ? all.find((r) => r.slot_id === input.slotId) : undefined) ??
    all.find((r) => r.document_id === input.durableDocumentId && r.closed_at === null);
  const slotId =
    existing?.slot_id ??
    (all.some((r) => r.slot_id === "primary") ? `doc_${randomBytes(4).toString("hex")}` : "primary");
  const position = all.reduce((max, r) => Math.max(max, r.position + 1), 0);
  // A new slot is focused when asked, or when it is the only open one.
  const focusedIfNew = input.focus || all.every((r) => r.closed_at !== null);
  const res = await trx.raw<{ rows: RosterRow[] }>(
    `with unfocus as (
       update ${T.roster} set focused = false
        where owner_id = ? and session_id = ? and slot_id <> ? and focused and ?
     ),
     up as (
       insert into ${T.roster}
              (owner_id, session_id, slot_id, position, focused, document_id, title, last_seen_version_id,
               closed_at, closed_reason)
       values (?, ?, ?, ?, ?, ?, ?, ?, null, null)
       on conflict (owner_id, session_id, slot_id) do update
          set document_id = excluded.document_id, title = excluded.title,
              last_seen_version_id = excluded.last_seen_version_id, closed_at = null, closed_reason = null,
              focused = ${T.roster}.focused or ?
       returning *
     ),
     touch as (update ${T.sessions} set updated_at = now() where owner_id = ? and id = ?)
     select * from up`,
    [
      ownerId,
      input.sessionId,
      slotId,
      input.focus,
      ownerId,
      input.sessionId,
      slotId,
      position,
      focusedIfNew,
      input.durableDocumentId,
      input.title,
      input.versionId,
      input.focus,
      ownerId,
      input.sessionId,
    ],
  );
  return res.rows[0];
}

/**
 * Puts a durable document in the session's roster: rebinds `slotId` when given, reuses the
 * slot already holding the document, or opens a new slot ("primary" first, then "doc_<hex>").
 * With `focus`, it becomes the only focused slot. NotFoundError for a foreign session.
 */
export async function attachDocument(db: Knex, ownerId: string, input: AttachInput): Promise<RosterRow> {
  return db.transaction(async (trx) => {
    const locked = await lockSession(trx, ownerId, input.sessionId, "");
    if (!locked) throw new NotFoundError("Session not found");
    return attachLocked(trx, ownerId, locked.roster, input);
  });
}

/** One turn to record (sessions.v1 AppendTurnRequest). */
export interface AppendTurnInput {
  sessionId: string;
  userMessage: string;
  aiMessage: string;
  checkpointVersionId: string;
  durableDocumentId: string;
  versionId: string;
  title: string;
  /** Put the turn's document in the roster first (a document the turn loaded). */
  attach?: { focus: boolean; slotId: string };
  /** Add the user's message to the memory note `memoryKey`. */
  remember?: boolean;
  memoryKey?: string;
  /** The note as the turn read it (GetTurnContext); undefined when unknown. */
  memoryNoteSeen?: string;
}

/**
 * Appends a turn: the user's message and the AI's reply share the next turn index; the roster's
 * last-seen version and title follow the document the turn worked on. With `attach`, the
 * document is put in the roster too (AttachDocument's rules); with `remember`, the user's
 * message joins the memory note. NotFoundError for a foreign session. Returns the turn index.
 *
 * Every chat turn ends here, so the common case is one optimistic statement: it writes only if
 * no concurrent attach took the slot it chose and the note still reads `memoryNoteSeen`; when
 * either moved, the turn is recorded again under the session's row lock.
 */
export async function appendTurn(db: Knex, ownerId: string, input: AppendTurnInput): Promise<number> {
  const attach = input.attach && input.durableDocumentId ? input.attach : undefined;
  const memoryKey = input.memoryKey ?? "";
  const memory =
    input.remember && input.memoryNoteSeen !== undefined
      ? { key: memoryKey, old: input.memoryNoteSeen, note: appendMemoryLine(input.memoryNoteSeen, input.userMessage) }
      : undefined;
  if (!input.remember || memory) {
    const res = await appendTurnStatement(db, ownerId, input, { attach, memory });
    if (!res.owned) throw new NotFoundError("Session not found");
    if (res.turnIndex !== null) {
      // The note changed since the turn read it: add the line under its row lock.
      if (memory && !res.remembered) await remember(db, ownerId, memoryKey, input.userMessage);
      return res.turnIndex;
    }
  }
  return db.transaction(async (trx) => {
    const locked = await lockSession(trx, ownerId, input.sessionId, memoryKey);
    if (!locked) throw new NotFoundError("Session not found");
    if (attach) {
      await attachLocked(trx, ownerId, locked.roster, {
        sessionId: input.sessionId,
        durableDocumentId: input.durableDocumentId,
        title: input.title,
        focus: attach.focus,
        versionId: input.versionId,
        slotId: attach.slotId || undefined,
      });
    }
    const lockedMemory = input.remember
      ? { key: memoryKey, old: locked.note, note: appendMemoryLine(locked.note ?? "", input.userMessage) }
      : undefined;
    const res = await appendTurnStatement(trx, ownerId, input, { memory: lockedMemory, rosterDone: Boolean(attach) });
    if (res.turnIndex === null) throw new NotFoundError("Session not found");
    // A note created by another turn since the lock's read: add the line under its row lock.
    if (lockedMemory && !res.remembered) await rememberIn(trx, ownerId, memoryKey, input.userMessage);
    return res.turnIndex;
  });
}

/**
 * The writes of a turn as one statement: with `attach`, the roster slot (the one holding the
 * document or named, else a new one; refused when a concurrent attach took it); the next turn
 * index and the title of an untitled session; both messages; the roster's last-seen version;
 * with `memory`, the note, written only if it still reads `memory.old`. Nothing is written
 * for another owner's session (`owned` false) or a refused attach (`turnIndex` null).
 */
async function appendTurnStatement(
  db: Knex | Knex.Transaction,
  ownerId: string,
  input: AppendTurnInput,
  opts: {
    attach?: { focus: boolean; slotId: string };
    memory?: { key: string; old: string | null; note: string };
    /** The caller attached the document already (the locked path): no last-seen update. */
    rosterDone?: boolean;
  },
): Promise<{ owned: boolean; turnIndex: number | null; remembered: boolean }> {
  const { attach, memory } = opts;
  const sid = input.sessionId;
  const ctes: string[] = [];
  const bindings: unknown[] = [];
  const cte = (sql: string, ...values: unknown[]) => {
    ctes.push(sql);
    bindings.push(...values);
  };
  if (attach) {
    cte(
      `cur as (select slot_id, document_id, closed_at, position from ${T.roster} where owner_id = ? and session_id = ?)`,
      ownerId,
      sid,
    );
    // No row unless the caller owns the session, so nothing below writes into another's roster.
    cte(
      `pick as (
         select coalesce((select slot_id from cur where slot_id = ?),
                         (select slot_id from cur where document_id = cast(? as uuid) and closed_at is null limit 1)) as existing,
                case when exists (select 1 from cur where slot_id = 'primary') then ? else 'primary' end as fresh,
                coalesce((select max(position) + 1 from cur), 0) as position,
                (? or not exists (select 1 from cur where closed_at is null)) as focused_if_new
           from ${T.sessions} own where own.id = ? and own.owner_id = ?
       )`,
      attach.slotId,
      input.durableDocumentId,
      `doc_${randomBytes(4).toString("hex")}`,
      attach.focus,
      sid,
      ownerId,
    );
    cte(
      `up as (
         insert into ${T.roster}
                (owner_id, session_id, slot_id, position, focused, document_id, title, last_seen_version_id,
                 closed_at, closed_reason)
         select ?, ?, coalesce(pick.existing, pick.fresh), pick.position, pick.focused_if_new, cast(? as uuid), ?, ?,
                null, null
           from pick
         on conflict (owner_id, session_id, slot_id) do update
            set document_id = excluded.document_id, title = excluded.title,
                last_seen_version_id = excluded.last_seen_version_id, closed_at = null, closed_reason = null,
                focused = ${T.roster}.focused or ?
          where (select existing from pick) is not null
         returning slot_id
       )`,
      ownerId,
      sid,
      input.durableDocumentId,
      input.title,
      input.versionId,
      attach.focus,
    );
    cte(
      `unfocus as (
         update ${T.roster} set focused = false
          where owner_id = ? and session_id = ? and focused and ? and slot_id <> (select slot_id from up)
       )`,
      ownerId,
      sid,
      attach.focus,
    );
  }
  cte(
    `s as (
       update ${T.sessions}
          set next_turn_index = next_turn_index + 1, updated_at = now(),
              title = case when title = '' then ? else title end
        where id = ? and owner_id = ?${attach ? " and exists (select 1 from up)" : ""}
       returning next_turn_index - 1 as turn_index
     )`,
    (input.title || input.userMessage).slice(0, TITLE_CHARS),
    sid,
    ownerId,
  );
  cte(
    `m as (
       insert into ${T.messages} (id, owner_id, session_id, turn_index, sender, content, checkpoint_id)
       select x.id, ?, ?, s.turn_index, x.sender, x.content, ?
         from s cross join (values (cast(? as uuid), 'user', ?), (cast(? as uuid), 'ai', ?)) as x(id, sender, content)
     )`,
    ownerId,
    sid,
    input.checkpointVersionId,
    randomUUID(),
    input.userMessage,
    randomUUID(),
    input.aiMessage,
  );
  if (!attach && !opts.rosterDone && input.durableDocumentId && input.versionId) {
    cte(
      `r as (
         update ${T.roster}
            set last_seen_version_id = ?, title = case when ? <> '' then ? else title end
          where owner_id = ? and session_id = ? and document_id = cast(? as uuid) and closed_at is null
            and exists (select 1 from s)
       )`,
      input.versionId,
      input.title,
      input.title,
      ownerId,
      sid,
      input.durableDocumentId,
    );
  }
  if (memory) {
    cte(
      `mem as (
         insert into ${T.memory} (owner_id, memory_key, note)
         select ?, ?, ? from s
         on conflict (owner_id, memory_key) do update
            set note = excluded.note, updated_at = now()
          where ${T.memory}.note = ?
         returning 1
       )`,
      ownerId,
      memory.key,
      memory.note,
      memory.old,
    );
  }
  const res = await db.raw<{ rows: { owned: boolean; turn_index: number | null; remembered: number }[] }>(
    `with ${ctes.join(",\n")}
     select exists (select 1 from ${T.sessions} where id = ? and owner_id = ?) as owned,
            (select turn_index from s) as turn_index,
            ${memory ? "(select count(*) from mem)::int" : "0"} as remembered`,
    [...bindings, sid, ownerId],
  );
  const row = res.rows[0];
  return { owned: row.owned, turnIndex: row.turn_index, remembered: row.remembered > 0 };
}

/** The active history in order (user before ai within a turn). NotFoundError for a foreign session. */
export async function getHistory(
  db: Knex,
  ownerId: string,
  sessionId: string,
): Promise<{ view: SessionView; messages: MessageRow[] }> {
  const v = await getSession(db, ownerId, sessionId);
  const messages = await db<MessageRow>(T.messages)
    .where({ owner_id: ownerId, session_id: sessionId, active: true })
    .orderBy([
      { column: "turn_index", order: "asc" },
      { column: "created_at", order: "asc" },
      { column: "sender", order: "desc" },
    ]);
  return { view: v, messages };
}
