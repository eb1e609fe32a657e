// Changes from other sessions: polls GET /v1/sessions/{id}/doc-events (the spec's mechanism for
// cross-session updates, no held connection) and, when another session committed to the shown
// document, re-reads it and marks the chunks it changed.
import { reloadDocument } from "./documents.js";
import { byId } from "./dom.js";
import { mark, setLayer } from "./highlights.js";
import { client, currentDoc, hasClient, view } from "./session.js";

/** How often the page asks for other sessions' commits, in ms. */
const POLL_MS = 3000;

let cursor: { sessionId: string; afterId: number } | null = null;
let timer: ReturnType<typeof setTimeout> | undefined;

/** Starts polling (once); each new session starts from its current last event. */
export function startSync(): void {
  byId("sync-dismiss").addEventListener("click", () => {
    byId("sync-banner").hidden = true;
    setLayer("synced", new Map());
  });
  if (timer === undefined) timer = setTimeout(poll, POLL_MS);
}

async function poll(): Promise<void> {
  try {
    await pollOnce();
  } catch {
    // A failed poll (network, a revoked key) is retried on the next tick; the status bar keeps
    // the user's own errors.
  } finally {
    timer = setTimeout(poll, POLL_MS);
  }
}

async function pollOnce(): Promise<void> {
  const doc = currentDoc();
  if (!doc || !hasClient()) return;
  const first = cursor?.sessionId !== doc.sessionId;
  const afterId = first ? 0 : (cursor?.afterId ?? 0);
  const { data, response } = await client().api.GET("/v1/sessions/{session_id}/doc-events", {
    params: { path: { session_id: doc.sessionId }, query: { after_id: afterId } },
  });
  if (!response.ok || !data) return;
  cursor = { sessionId: doc.sessionId, afterId: data.last_id };
  // The first poll of a session only sets the cursor: older commits are already in what it loaded.
  if (first || data.events.length === 0) return;
  const chunks = data.events.flatMap((e) => e.chunk_ids ?? []);
  await reloadDocument(doc.sessionId);
  setLayer("synced", mark(chunks, "synced"));
  const last = data.events[data.events.length - 1];
  byId("sync-text").textContent = `Another session changed this document (${data.events.length} update${
    data.events.length === 1 ? "" : "s"
  }, ${last.change}); it is shown as it is now, with the changed chunks in blue.`;
  const banner = byId("sync-banner");
  banner.hidden = false;
  if (chunks[0]) view().reveal(chunks[0], false);
}
