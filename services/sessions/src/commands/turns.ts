// Recording a chat turn: both messages, the roster's view of the document, the memory note.
import { type Knex, NotFoundError } from "@redline/service-kit";
import { lockSessionWithRoster } from "../db/store/sessions.js";
import {
  isTurnKeyTaken,
  type TurnExchange,
  type TurnWrite,
  type TurnWritten,
  turnIndexOfKey,
  writeTurn,
} from "../db/store/turns.js";
import { appendMemoryLine, rememberIn } from "./memory.js";
import { attachLocked } from "./roster.js";

const TITLE_CHARS = 80;

/** One turn to record (sessions.v1 AppendTurnRequest). */
export interface AppendTurnInput extends TurnExchange {
  /** Put the turn's document in the roster first (a document the turn loaded). */
  attach?: { focus: boolean; slotId: string };
  /** Add the user's message to the memory note `memoryKey`. */
  remember?: boolean;
  memoryKey?: string;
  /** The note as the turn read it (GetTurnContext); undefined when unknown. */
  memoryNoteSeen?: string;
}

function turnWrite(input: AppendTurnInput, extra: Partial<TurnWrite>): TurnWrite {
  return {
    sessionId: input.sessionId,
    userMessage: input.userMessage,
    aiMessage: input.aiMessage,
    checkpointVersionId: input.checkpointVersionId,
    durableDocumentId: input.durableDocumentId,
    versionId: input.versionId,
    title: input.title,
    turnKey: input.turnKey,
    sessionTitle: (input.title || input.userMessage).slice(0, TITLE_CHARS),
    ...extra,
  };
}

/**
 * Appends a turn: the user's message and the AI's reply share the next turn index; the roster's
 * last-seen version and title follow the document the turn worked on. With `attach`, the
 * document is put in the roster too (AttachDocument's rules); with `remember`, the user's
 * message joins the memory note. NotFoundError for a foreign session. Returns the turn index.
 * With `turnKey`, idempotent: a replay of a recorded key writes nothing and returns its index.
 *
 * Every chat turn ends here, so the common case is one optimistic statement: it writes only if
 * no concurrent attach took the slot it chose and the note still reads `memoryNoteSeen`; when
 * either moved, the turn is recorded again under the session's row lock. A turn that remembers
 * a line runs in a transaction, so the turn and its line commit together or not at all.
 */
export async function appendTurn(db: Knex, ownerId: string, input: AppendTurnInput): Promise<number> {
  try {
    return await appendTurnOnce(db, ownerId, input);
  } catch (err) {
    // A replay (the agent retrying after sessions died mid-call): the unique index failed the
    // whole statement, so nothing was written twice; answer with the first call's index. Writing
    // first keeps the common case at one round trip (issue #5).
    if (!input.turnKey || !isTurnKeyTaken(err)) throw err;
    const recorded = await turnIndexOfKey(db, ownerId, input.sessionId, input.turnKey);
    if (recorded === null) throw err;
    return recorded;
  }
}

/** appendTurn without the turn key's replay check. */
async function appendTurnOnce(db: Knex, ownerId: string, input: AppendTurnInput): Promise<number> {
  const attach = input.attach && input.durableDocumentId ? input.attach : undefined;
  const memoryKey = input.memoryKey ?? "";
  const memory =
    input.remember && input.memoryNoteSeen !== undefined
      ? { key: memoryKey, old: input.memoryNoteSeen, note: appendMemoryLine(input.memoryNoteSeen, input.userMessage) }
      : undefined;
  if (!input.remember || memory) {
    // With a line to remember, the turn and the fallback line commit together: a turn recorded
    // without its line would stay so, as a retry finds its turn key recorded and writes nothing.
    const turnIndex = memory
      ? await db.transaction(async (trx) => {
          const res = await writeOwnedTurn(trx, ownerId, turnWrite(input, { attach, memory }));
          // The note changed since the turn read it: add the line under its row lock.
          if (res.turnIndex !== null && !res.remembered) await rememberIn(trx, ownerId, memoryKey, input.userMessage);
          return res.turnIndex;
        })
      : (await writeOwnedTurn(db, ownerId, turnWrite(input, { attach }))).turnIndex;
    if (turnIndex !== null) return turnIndex;
  }
  return appendTurnLocked(db, ownerId, input, attach, memoryKey);
}

/** writeTurn, with NotFoundError for another owner's session. */
async function writeOwnedTurn(db: Knex, ownerId: string, w: TurnWrite): Promise<TurnWritten> {
  const res = await writeTurn(db, ownerId, w);
  if (!res.owned) throw new NotFoundError("Session not found");
  return res;
}

/** appendTurn's second path: the same writes under the session's row lock. */
async function appendTurnLocked(
  db: Knex,
  ownerId: string,
  input: AppendTurnInput,
  attach: { focus: boolean; slotId: string } | undefined,
  memoryKey: string,
): Promise<number> {
  return db.transaction(async (trx) => {
    const locked = await lockSessionWithRoster(trx, ownerId, input.sessionId, memoryKey);
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
    const memory = input.remember
      ? { key: memoryKey, old: locked.note, note: appendMemoryLine(locked.note ?? "", input.userMessage) }
      : undefined;
    const res = await writeTurn(trx, ownerId, turnWrite(input, { memory, rosterDone: Boolean(attach) }));
    if (res.turnIndex === null) throw new NotFoundError("Session not found");
    // A note created by another turn since the lock's read: add the line under its row lock.
    if (memory && !res.remembered) await rememberIn(trx, ownerId, memoryKey, input.userMessage);
    return res.turnIndex;
  });
}
