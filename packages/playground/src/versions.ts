// The versions panel: the document's history (GET /v1/documents/{id}/versions, newest first),
// a diff of each version against its predecessor (…/diff, change records chunk by chunk) and
// restore (…/restore: a new version equal to that one, non-billable).
import type { ChangeRecord, DocumentVersion } from "@redline/client";
import { htmlText } from "./doc-view.js";
import { reloadDocument } from "./documents.js";
import { byId, h, status } from "./dom.js";
import { mark, setLayer } from "./highlights.js";
import { client, currentDoc, hasClient, view } from "./session.js";

let runTask: (task: () => Promise<void>) => void = (task) => void task();

/** Wires Refresh; `run` reports a task's failure. */
export function initVersions(run: (task: () => Promise<void>) => void): void {
  runTask = run;
  byId("versions-refresh").addEventListener("click", () => run(refreshVersions));
}

/** Re-reads the version list of the shown document. */
export async function refreshVersions(): Promise<void> {
  const doc = currentDoc();
  if (!doc?.documentId || !hasClient()) return;
  const { versions, total } = await client().listVersions(doc.documentId, { limit: 50 });
  byId("versions-summary").textContent = `${total} version${total === 1 ? "" : "s"}, newest first`;
  byId("versions").replaceChildren(...versions.map((v, i) => versionItem(doc.documentId as string, v, i === 0)));
}

function versionItem(documentId: string, v: DocumentVersion, head: boolean): HTMLElement {
  const diff = h("button", { class: "ghost diff-button", type: "button", text: "Diff" });
  const restore = h("button", { class: "ghost restore-button", type: "button", text: "Restore" });
  restore.disabled = head;
  diff.addEventListener("click", () => runTask(() => showDiff(documentId, v)));
  restore.addEventListener("click", () => runTask(() => restoreTo(documentId, v)));
  const when = new Date(v.created_at).toLocaleString();
  return h(
    "li",
    { class: `version${head ? " current" : ""}`, data: { versionId: v.version_id, seq: String(v.seq) } },
    h("div", {
      class: "summary",
      text: `#${v.seq} · ${v.kind}${head ? " (current)" : ""} · ${v.summary || "no summary"}`,
    }),
    h("div", {
      class: "when",
      text: `${when} · ${v.chunks_changed} chunk${v.chunks_changed === 1 ? "" : "s"} changed`,
    }),
    h("div", { class: "actions" }, diff, restore),
  );
}

async function showDiff(documentId: string, v: DocumentVersion): Promise<void> {
  const res = (await client().diffVersions(documentId, v.version_id)) as { changes?: ChangeRecord[] };
  const changes = res.changes ?? [];
  const box = byId("diff");
  box.hidden = false;
  box.replaceChildren(
    h("h3", {
      text: `Version #${v.seq} against the one before: ${changes.length} change${changes.length === 1 ? "" : "s"}`,
    }),
    ...changes.map((c) =>
      h(
        "article",
        { class: "card", data: { state: "approved", chunkId: c.chunk_id } },
        h(
          "div",
          { class: "card-head" },
          h("span", { class: "op", text: c.operation }),
          h("span", { class: "chunk", text: c.chunk_id }),
        ),
        c.old_html ? h("div", { class: "old" }, h("span", { text: htmlText(c.old_html) })) : null,
        c.new_html ? h("div", { class: "new" }, h("span", { text: htmlText(c.new_html) })) : null,
      ),
    ),
  );
  const shown = changes.filter((c) => c.operation !== "delete").map((c) => c.chunk_id);
  setLayer("changed", mark(shown, "changed"));
  if (shown[0]) view().reveal(shown[0], false);
}

async function restoreTo(documentId: string, v: DocumentVersion): Promise<void> {
  const res = (await client().restoreVersion(documentId, v.version_id)) as { restored?: boolean };
  setLayer("changed", new Map());
  byId("diff").hidden = true;
  await reloadDocument();
  await refreshVersions();
  status(
    res.restored === false
      ? `Version #${v.seq} is already the current content.`
      : `Restored version #${v.seq} as a new version.`,
  );
}
