// export: a stored export (POST /v1/downloads of the saved document), a file written to the
// object store. Not in the default loop.
import type { ClientState, LoadIo } from "../client.js";

/** POST /v1/downloads of the client's saved document as HTML. */
export async function exportDocument(io: LoadIo, c: ClientState): Promise<void> {
  await io.request(c, "export", "POST", "/v1/downloads", {
    session_id: c.save.sessionId,
    document_id: c.save.slotId,
    format: "html",
  });
}
