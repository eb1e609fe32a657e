// doc_events: a poll of the saved document's session events after the last one seen.
import type { ClientState, LoadIo } from "../client.js";

/** GET .../doc-events after the client's cursor; an answer moves the cursor. */
export async function docEvents(io: LoadIo, c: ClientState): Promise<void> {
  const a = await io.request(
    c,
    "doc_events",
    "GET",
    `/v1/sessions/${c.save.sessionId}/doc-events?after_id=${c.docEventsCursor}&include_own=true`,
  );
  if (a?.status === 200) c.docEventsCursor = Number((JSON.parse(a.text) as { last_id: number }).last_id);
}
