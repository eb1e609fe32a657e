// The export panel: every format of POST /v1/documents/export (docx with tracked changes too),
// delivered as a download (a blob: URL on an <a download>); warnings listed under the form.
import type { ExportFormat } from "@redline/client";
import { byId, h, status } from "./dom.js";
import { client, currentDoc } from "./session.js";

/** Wires the export form; `run` reports a task's failure. */
export function initExports(run: (task: () => Promise<void>) => void): void {
  const format = byId<HTMLSelectElement>("export-format");
  const track = byId<HTMLInputElement>("export-track");
  const syncTrack = () => {
    track.disabled = format.value !== "docx";
    if (track.disabled) track.checked = false;
  };
  format.addEventListener("change", syncTrack);
  syncTrack();
  byId<HTMLFormElement>("export-form").addEventListener("submit", (event) => {
    event.preventDefault();
    run(() => exportCurrent(format.value as ExportFormat, track.checked));
  });
}

async function exportCurrent(format: ExportFormat, trackChanges: boolean): Promise<void> {
  const doc = currentDoc();
  if (!doc) throw new Error("Nothing to export yet: load a document first.");
  status(`Exporting as ${format}…`);
  const name = byId<HTMLInputElement>("export-filename").value.trim();
  const file = await client().exportDocument({
    sessionId: doc.sessionId,
    format,
    ...(trackChanges && { trackChanges: true }),
    ...(name && { filename: name }),
  });
  const blob = new Blob([file.bytes as Uint8Array<ArrayBuffer>], { type: file.contentType });
  const url = URL.createObjectURL(blob);
  const link = h("a", { class: "sr-only", text: file.filename });
  link.href = url;
  link.download = file.filename;
  document.body.append(link);
  link.click();
  link.remove();
  // The download has started from the URL; it can go once the click is handled.
  setTimeout(() => URL.revokeObjectURL(url), 60_000);
  byId("export-warnings").replaceChildren(...file.warnings.map((w) => h("li", { text: w })));
  status(`Downloaded ${file.filename}${file.warnings.length ? ` with ${file.warnings.length} warnings` : ""}.`);
}
