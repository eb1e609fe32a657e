// SQL of recording a turn: one statement of data-modifying CTEs (roster attach, turn index and
// title, both messages, last-seen version, memory note), built piece by piece.
import { randomBytes, randomUUID } from "node:crypto";
import { T } from "../tables.js";
import type { Db } from "./sessions.js";

/** A turn's exchange: both messages, the checkpoint, and the document the turn worked on. */
export interface TurnExchange {
  sessionId: string;
  userMessage: string;
  aiMessage: string;
  checkpointVersionId: string;
  durableDocumentId: string;
  versionId: string;
  title: string;
  /** Idempotency key of the turn ("" or absent = none): a recorded key is not written again. */
  turnKey?: string;
}

/** What one turn writes. */
export interface TurnWrite extends TurnExchange {
  /** The session title when it has none yet. */
  sessionTitle: string;
  /** Put the document in the roster in the same statement (refused when a concurrent attach took the slot). */
  attach?: { focus: boolean; slotId: string };
  /** Write the note only if it still reads `old`. */
  memory?: { key: string; old: string | null; note: string };
  /** The caller attached the document already (the locked path): no last-seen update. */
  rosterDone?: boolean;
}

/** The statement's outcome: `owned` false for another owner's session; `turnIndex` null when refused. */
export interface TurnWritten {
  owned: boolean;
  turnIndex: number | null;
  remembered: boolean;
}

class Ctes {
  readonly sql: string[] = [];
  readonly bindings: unknown[] = [];
  add(sql: string, ...values: unknown[]): void {
    this.sql.push(sql);
    this.bindings.push(...values);
  }
}

/** cur, pick, up, unfocus: the roster slot of an attach, chosen and written inside the statement. */
function attachCtes(c: Ctes, ownerId: string, w: TurnWrite, attach: { focus: boolean; slotId: string }): void {
  const sid = w.sessionId;
  c.add(
    `cur as (select slot_id, document_id, closed_at, position from ${T.roster} where owner_id = ? and session_id = ?)`,
    ownerId,
    sid,
  );
  // No row unless the caller owns the session, so nothing below writes into another's roster.
  c.add(
    `pick as (
       select coalesce((select slot_id from cur where slot_id = ?),
                       (select slot_id from cur where document_id = cast(? as uuid) and closed_at is null limit 1)) as existing,
              case when exists (select 1 from cur where slot_id = 'primary') then ? else 'primary' end as fresh,
              coalesce((select max(position) + 1 from cur), 0) as position,
              (? or not exists (select 1 from cur where closed_at is null)) as focused_if_new
         from ${T.sessions} own where own.id = ? and own.owner_id = ?
     )`,
    ...[attach.slotId, w.durableDocumentId, `doc_${randomBytes(4).toString("hex")}`, attach.focus, sid, ownerId],
  );
  c.add(
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
    ...[ownerId, sid, w.durableDocumentId, w.title, w.versionId, attach.focus],
  );
  c.add(
    `unfocus as (
       update ${T.roster} set focused = false
        where owner_id = ? and session_id = ? and focused and ? and slot_id <> (select slot_id from up)
     )`,
    ...[ownerId, sid, attach.focus],
  );
}

/** s, m: the next turn index (and the title of an untitled session), then both messages. */
function turnCtes(c: Ctes, ownerId: string, w: TurnWrite): void {
  c.add(
    `s as (
       update ${T.sessions}
          set next_turn_index = next_turn_index + 1, updated_at = now(),
              title = case when title = '' then ? else title end
        where id = ? and owner_id = ?${w.attach ? " and exists (select 1 from up)" : ""}
       returning next_turn_index - 1 as turn_index
     )`,
    ...[w.sessionTitle, w.sessionId, ownerId],
  );
  c.add(
    `m as (
       insert into ${T.messages} (id, owner_id, session_id, turn_index, sender, content, checkpoint_id, turn_key)
       select x.id, ?, ?, s.turn_index, x.sender, x.content, ?, nullif(?, '')
         from s cross join (values (cast(? as uuid), 'user', ?), (cast(? as uuid), 'ai', ?)) as x(id, sender, content)
     )`,
    ...[ownerId, w.sessionId, w.checkpointVersionId, w.turnKey ?? ""],
    ...[randomUUID(), w.userMessage, randomUUID(), w.aiMessage],
  );
}

/** r: the roster's last-seen version (and title) of the document the turn worked on. */
function seenCte(c: Ctes, ownerId: string, w: TurnWrite): void {
  c.add(
    `r as (
       update ${T.roster}
          set last_seen_version_id = ?, title = case when ? <> '' then ? else title end
        where owner_id = ? and session_id = ? and document_id = cast(? as uuid) and closed_at is null
          and exists (select 1 from s)
     )`,
    ...[w.versionId, w.title, w.title, ownerId, w.sessionId, w.durableDocumentId],
  );
}

/** mem: the note, written only if it still reads `memory.old`. */
function memoryCte(c: Ctes, ownerId: string, memory: NonNullable<TurnWrite["memory"]>): void {
  c.add(
    `mem as (
       insert into ${T.memory} (owner_id, memory_key, note)
       select ?, ?, ? from s
       on conflict (owner_id, memory_key) do update
          set note = excluded.note, updated_at = now()
        where ${T.memory}.note = ?
       returning 1
     )`,
    ...[ownerId, memory.key, memory.note, memory.old],
  );
}

/**
 * The writes of a turn as one statement. Nothing is written for another owner's session
 * (`owned` false) or a refused attach (`turnIndex` null); `remembered` false when the note moved.
 */
export async function writeTurn(db: Db, ownerId: string, w: TurnWrite): Promise<TurnWritten> {
  const c = new Ctes();
  if (w.attach) attachCtes(c, ownerId, w, w.attach);
  turnCtes(c, ownerId, w);
  if (!w.attach && !w.rosterDone && w.durableDocumentId && w.versionId) seenCte(c, ownerId, w);
  if (w.memory) memoryCte(c, ownerId, w.memory);
  const res = await db.raw<{ rows: { owned: boolean; turn_index: number | null; remembered: number }[] }>(
    `with ${c.sql.join(",\n")}
     select exists (select 1 from ${T.sessions} where id = ? and owner_id = ?) as owned,
            (select turn_index from s) as turn_index,
            ${w.memory ? "(select count(*) from mem)::int" : "0"} as remembered`,
    [...c.bindings, w.sessionId, ownerId],
  );
  const row = res.rows[0];
  return { owned: row.owned, turnIndex: row.turn_index, remembered: row.remembered > 0 };
}

/** The turn index recorded under `turnKey` in the owner's session; null when none is. */
export async function turnIndexOfKey(
  db: Db,
  ownerId: string,
  sessionId: string,
  turnKey: string,
): Promise<number | null> {
  const row = await db(T.messages)
    .where({ owner_id: ownerId, session_id: sessionId, turn_key: turnKey })
    .first<{ turn_index: number } | undefined>("turn_index");
  return row?.turn_index ?? null;
}

/** True for the unique violation of a turn key recorded by a concurrent replay. */
export function isTurnKeyTaken(err: unknown): boolean {
  return (
    err instanceof Error &&
    "code" in err &&
    err.code === "23505" &&
    "constraint" in err &&
    err.constraint === "messages_turn_key"
  );
}
