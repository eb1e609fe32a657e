// Cross-session memory notes: a bounded list of an account's (or an end-customer's) recent
// instructions, read at the start of every turn (GetTurnContext) and appended to at its end.
import type { Knex } from "@redline/service-kit";
import { deleteNote, lockNote, writeNote } from "../db/store/memory.js";

/** Lines kept in a memory note, and the note's size bound in characters. */
export const MEMORY_MAX_LINES = 12;
const MEMORY_MAX_CHARS = 2000;
const MEMORY_LINE_CHARS = 300;

/** `note` with `line` appended, keeping the last 12 lines and at most 2,000 characters. */
export function appendMemoryLine(note: string, line: string): string {
  const clean = line.replace(/\s+/g, " ").trim().slice(0, MEMORY_LINE_CHARS);
  const lines = note ? note.split("\n") : [];
  if (clean && lines.at(-1) !== clean) lines.push(clean);
  let kept = lines.slice(-MEMORY_MAX_LINES);
  while (kept.join("\n").length > MEMORY_MAX_CHARS && kept.length > 1) kept = kept.slice(1);
  return kept.join("\n").slice(-MEMORY_MAX_CHARS);
}

/** Adds a line to a memory note (bounded); concurrent turns serialize on the note's row. */
export async function remember(db: Knex, ownerId: string, memoryKey: string, line: string): Promise<string> {
  return db.transaction((trx) => rememberIn(trx, ownerId, memoryKey, line));
}

/** remember() inside the caller's transaction; returns the new note. */
export async function rememberIn(
  trx: Knex.Transaction,
  ownerId: string,
  memoryKey: string,
  line: string,
): Promise<string> {
  const row = await lockNote(trx, ownerId, memoryKey);
  const note = appendMemoryLine(row.note, line);
  await writeNote(trx, ownerId, memoryKey, note);
  return note;
}

/** Deletes one memory note (endpoint 4); returns how many were removed (0 or 1). */
export async function clearMemoryNote(db: Knex, ownerId: string, memoryKey: string): Promise<number> {
  return deleteNote(db, ownerId, memoryKey);
}
