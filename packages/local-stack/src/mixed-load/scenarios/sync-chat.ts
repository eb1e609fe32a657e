// sync_chat: a sync chat turn on the client's small stored document through the offline
// engine, swapping one word for the next; a turn that changed the document goes into the ledger.
import type { ClientState, LoadIo } from "../client.js";

/** Words the chat document cycles through (`replace "w_i" with "w_i+1"`). */
export const CHAT_WORDS = ["amber", "birch", "cedar", "delta", "ember", "fjord"];

/** One sync chat turn of `c`; a request without an answer leaves its billing unknown. */
export async function syncChat(io: LoadIo, c: ClientState): Promise<void> {
  const from = CHAT_WORDS[c.chat.word % CHAT_WORDS.length];
  const to = CHAT_WORDS[(c.chat.word + 1) % CHAT_WORDS.length];
  const a = await io.request(c, "sync_chat", "POST", "/v1/chat", {
    message: `replace "${from}" with "${to}"`,
    session_id: c.chat.sessionId,
  });
  if (!a) {
    c.unknownBillable = true;
    return;
  }
  if (a.status !== 200) return;
  const body = JSON.parse(a.text) as {
    document_changes?: { version_id?: string; document_id?: string } | null;
    usage?: { ops_charged?: number };
  };
  const changed = body.document_changes?.version_id ?? null;
  if (changed) c.chat.word++;
  io.ledger.syncChats.push({
    client: c.index,
    documentId: c.chat.documentId,
    versionId: changed,
    opsCharged: body.usage?.ops_charged ?? 0,
  });
}
