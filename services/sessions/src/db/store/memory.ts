// SQL of memory notes: one row per (owner, memory_key); "" is the account-level note.
import type { Knex } from "@redline/service-kit";
import { type MemoryNoteRow, T } from "../tables.js";
import type { Db } from "./sessions.js";

/** The note locked for update, created empty first when missing (concurrent turns serialize on it). */
export async function lockNote(trx: Knex.Transaction, ownerId: string, memoryKey: string): Promise<MemoryNoteRow> {
  await trx(T.memory)
    .insert({ owner_id: ownerId, memory_key: memoryKey, note: "" })
    .onConflict(["owner_id", "memory_key"])
    .ignore();
  const row = await trx<MemoryNoteRow>(T.memory)
    .where({ owner_id: ownerId, memory_key: memoryKey })
    .forUpdate()
    .first();
  // The insert above guarantees the row inside this transaction.
  return row as MemoryNoteRow;
}

/** Sets the note's text. */
export async function writeNote(db: Db, ownerId: string, memoryKey: string, note: string): Promise<void> {
  await db(T.memory).where({ owner_id: ownerId, memory_key: memoryKey }).update({ note, updated_at: db.fn.now() });
}

/** Deletes one note; how many were removed (0 or 1). */
export async function deleteNote(db: Db, ownerId: string, memoryKey: string): Promise<number> {
  return db(T.memory).where({ owner_id: ownerId, memory_key: memoryKey }).delete();
}
