// The playground's entry: mounts the document view, wires every panel, and restores the key of
// this tab (sessionStorage) if one was given before a reload. No secret is in the page itself.
import { RedlineApiError } from "@redline/client";
import { addMessage, initChat } from "./chat.js";
import { DocView } from "./doc-view.js";
import { initDocumentInputs, loadMedia } from "./documents.js";
import { byId, status } from "./dom.js";
import { initExports } from "./exports.js";
import { initReview } from "./review.js";
import { type CurrentDocument, forgetKey, onDocument, savedKey, setView, useKey } from "./session.js";
import { startSync } from "./sync.js";
import { refreshUsage } from "./usage.js";
import { initVersions, refreshVersions } from "./versions.js";

/** Runs a user action; a failure is shown in the status bar (and the chat for a failed turn). */
function run(task: () => Promise<void>): void {
  task().catch((err: unknown) => {
    const message =
      err instanceof RedlineApiError
        ? `${err.message}${err.code ? ` (${err.code})` : ""}`
        : err instanceof Error
          ? err.message
          : String(err);
    status(message, "error");
    if (!byId("tab-chat").hidden) addMessage("error", message);
  });
}

/** Shows one side panel. */
function showTab(name: string): void {
  for (const tab of document.querySelectorAll<HTMLButtonElement>(".tab")) {
    const active = tab.dataset.tab === name;
    tab.classList.toggle("active", active);
    tab.setAttribute("aria-selected", String(active));
  }
  for (const panel of document.querySelectorAll<HTMLElement>(".tab-panel")) panel.hidden = panel.id !== `tab-${name}`;
}

function initTabs(): void {
  for (const tab of document.querySelectorAll<HTMLButtonElement>(".tab")) {
    tab.addEventListener("click", () => {
      showTab(tab.dataset.tab ?? "chat");
      if (tab.dataset.tab === "versions") run(refreshVersions);
    });
  }
}

function initKey(): void {
  const input = byId<HTMLInputElement>("api-key");
  const forget = byId("key-forget");
  const accept = async (key: string) => {
    useKey(key);
    try {
      await refreshUsage();
    } catch (err) {
      forgetKey();
      throw err instanceof RedlineApiError && err.status === 401 ? new Error("That API key was not accepted.") : err;
    }
    input.value = "";
    input.placeholder = `Key ${key.slice(0, 7)}… in use for this tab`;
    forget.hidden = false;
    status("Key accepted. Upload a document or paste HTML.");
  };
  byId<HTMLFormElement>("key-form").addEventListener("submit", (event) => {
    event.preventDefault();
    const key = input.value.trim();
    if (key) run(() => accept(key));
  });
  forget.addEventListener("click", () => {
    forgetKey();
    forget.hidden = true;
    byId("usage").hidden = true;
    input.placeholder = "Paste an API key (sk_…)";
    status("Key forgotten.");
  });
  const saved = savedKey();
  if (saved) run(() => accept(saved));
}

function showDocumentInfo(doc: CurrentDocument): void {
  byId("empty").hidden = true;
  byId("document").hidden = false;
  byId("doc-title").textContent = doc.title;
  byId("doc-info").textContent =
    `${docView.chunkCount()} chunks${doc.versionId ? ` · version ${doc.versionId.slice(0, 8)}` : ""}`;
  byId("session-label").textContent = `session ${doc.sessionId}`;
  document.body.dataset.sessionId = doc.sessionId;
  if (doc.documentId) document.body.dataset.documentId = doc.documentId;
}

const docView = new DocView(byId("document"), loadMedia);
setView(docView);
onDocument(showDocumentInfo);
initTabs();
initKey();
initDocumentInputs(run);
initChat(run);
initReview(run, showTab);
initVersions(run);
initExports(run);
startSync();
