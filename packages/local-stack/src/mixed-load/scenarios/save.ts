// save: the client's saved document written again with the next marker; an acknowledged save
// goes into the ledger with the version it created.
import type { ClientState, LoadIo } from "../client.js";

/** POST .../save of the next marker (c<client>-s<n>). */
export async function save(io: LoadIo, c: ClientState): Promise<void> {
  const n = c.save.n + 1;
  const marker = `c${c.index}-s${n}`;
  const html = c.save.html.replace(/marker c\d+-s\d+/, `marker ${marker}`);
  const a = await io.request(c, "save", "POST", `/v1/sessions/${c.save.sessionId}/documents/${c.save.slotId}/save`, {
    html,
  });
  // Numbers go up even when the outcome is unknown: a later marker never repeats an earlier one.
  c.save.n = n;
  if (a?.status !== 200) return;
  const body = JSON.parse(a.text) as { version_id: string; html: string; durable_document_id: string };
  c.save.html = body.html;
  io.ledger.saves.push({
    client: c.index,
    documentId: body.durable_document_id,
    versionId: body.version_id,
    marker,
    at: Date.now(),
  });
}
