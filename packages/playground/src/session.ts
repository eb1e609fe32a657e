// What the page knows about the user's work: the API client (built from the pasted key, kept in
// sessionStorage only), the session and document it works on, and the document view. Modules
// read and update it through these functions; `onDocument` listeners hear of every new version.
import { createRedlineClient, type RedlineClient } from "@redline/client";
import type { DocView } from "./doc-view.js";

const KEY_STORAGE = "redline.playground.apiKey";

/** The document the page shows. */
export interface CurrentDocument {
  sessionId: string;
  /** Durable UUID (versions, restore, diff); absent until the server reports it. */
  documentId?: string;
  versionId?: string;
  title: string;
  html: string;
}

interface State {
  client: RedlineClient | null;
  doc: CurrentDocument | null;
  view: DocView | null;
}

const state: State = { client: null, doc: null, view: null };
const listeners: ((doc: CurrentDocument) => void)[] = [];

/** The key saved for this tab, if any (sessionStorage: gone when the tab closes). */
export function savedKey(): string | null {
  return sessionStorage.getItem(KEY_STORAGE);
}

/** Builds the client for `key` against this origin and keeps the key for the tab. */
export function useKey(key: string): RedlineClient {
  sessionStorage.setItem(KEY_STORAGE, key);
  state.client = createRedlineClient({ baseUrl: window.location.origin, apiKey: key });
  return state.client;
}

/** Drops the key and the client. */
export function forgetKey(): void {
  sessionStorage.removeItem(KEY_STORAGE);
  state.client = null;
}

/** The client; throws a message the status bar can show when no key was given. */
export function client(): RedlineClient {
  if (!state.client) throw new Error("Paste an API key first.");
  return state.client;
}

export function hasClient(): boolean {
  return state.client !== null;
}

export function setView(view: DocView): void {
  state.view = view;
}

export function view(): DocView {
  if (!state.view) throw new Error("playground: the document view is not mounted");
  return state.view;
}

/** The document shown, or null before the first upload. */
export function currentDoc(): CurrentDocument | null {
  return state.doc;
}

/** Records a new document state, shows it and tells the listeners. */
export function setDocument(doc: CurrentDocument): void {
  state.doc = doc;
  view().setHtml(doc.html);
  for (const listener of listeners) listener(doc);
}

export function onDocument(listener: (doc: CurrentDocument) => void): void {
  listeners.push(listener);
}
