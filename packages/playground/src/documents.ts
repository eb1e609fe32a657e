// Loading documents: a file upload or pasted HTML becomes the session's document (uploadFile),
// and reloadDocument re-reads what the server holds after a turn,
// a decision, a restore or another session's commit (GET /v1/sessions/{id}/history).
import { DEFAULT_PRESIGN_ABOVE_BYTES, RedlineApiError, type UploadDocumentResponse } from "@redline/client";
import { byId, status } from "./dom.js";
import { client, currentDoc, savedKey, setDocument } from "./session.js";

/**
 * Uploads `file` into a new session (each file starts its own history of versions) and shows it: base64
 * JSON through the client up to its pre-signed threshold; above it multipart to this origin,
 * since the pre-signed PUT goes to the object store's host, which the page's CSP does not allow.
 */
export async function uploadFile(file: File): Promise<void> {
  status(`Uploading ${file.name}…`);
  const data =
    file.size <= DEFAULT_PRESIGN_ABOVE_BYTES
      ? await client().upload(
          { filename: file.name, data: file, contentType: file.type || undefined },
          { returnHtml: true },
        )
      : await uploadMultipart(file);
  if (!data.session_id) throw new Error("The upload answered no session id");
  if (data.html !== undefined) {
    setDocument({
      sessionId: data.session_id,
      documentId: data.durable_document_id,
      versionId: data.version_id,
      title: data.title || file.name,
      html: data.html,
    });
  } else {
    await reloadDocument(data.session_id);
  }
  const warnings = data.warnings.length ? ` (${data.warnings.length} conversion warnings)` : "";
  status(`Loaded ${file.name} (${data.format})${warnings}.`);
}

async function uploadMultipart(file: File): Promise<UploadDocumentResponse> {
  const form = new FormData();
  form.append("file", file, file.name);
  const result = await client().api.POST("/v1/documents/upload", {
    // openapi-fetch types a multipart body as its JSON shape; the FormData goes as it is.
    body: form as unknown as { file: string; return_html: boolean },
    bodySerializer: (body: unknown) => body as FormData,
  });
  return unwrap(result);
}

/** Loads pasted HTML as a document of the session, through the same upload route (as an .html file). */
export async function loadPastedHtml(html: string): Promise<void> {
  if (!html.trim()) throw new Error("Paste some HTML first.");
  const file = new File([html], "pasted.html", { type: "text/html" });
  await uploadFile(file);
}

/** Re-reads the session's focused document from the server and shows it. */
export async function reloadDocument(sessionId = currentDoc()?.sessionId): Promise<void> {
  if (!sessionId) return;
  const history = unwrap(
    await client().api.GET("/v1/sessions/{session_id}/history", {
      params: { path: { session_id: sessionId }, query: { include_document_html: true } },
    }),
  );
  const docState = history.document_state;
  if (!docState) return;
  const previous = currentDoc();
  setDocument({
    sessionId,
    documentId: docState.durable_document_id ?? previous?.documentId,
    versionId: docState.version_id,
    title: docState.title || previous?.title || "Untitled",
    html: docState.html_content ?? "",
  });
}

/** The data of an openapi-fetch result, or the RedlineApiError of its non-2xx answer. */
export function unwrap<T>(result: { data?: T; error?: unknown; response: Response }): T {
  if (!result.response.ok || result.data === undefined) {
    throw new RedlineApiError(result.response.status, result.error ?? null, result.response.headers);
  }
  return result.data;
}

const mediaUrls = new Map<string, Promise<string | undefined>>();

/** GET /v1/media/<sha256> with the key, as a blob: URL (the CSP allows blob: images). */
export function loadMedia(src: string): Promise<string | undefined> {
  let url = mediaUrls.get(src);
  if (!url) {
    url = fetch(src, { headers: { Authorization: `Bearer ${savedKey()}` } })
      .then(async (res) => (res.ok ? URL.createObjectURL(await res.blob()) : undefined))
      .catch(() => undefined);
    mediaUrls.set(src, url);
  }
  return url;
}

/** Wires the upload input and the paste box. */
export function initDocumentInputs(run: (task: () => Promise<void>) => void): void {
  const input = byId<HTMLInputElement>("file");
  input.addEventListener("change", () => {
    const file = input.files?.[0];
    input.value = "";
    if (file) run(() => uploadFile(file));
  });
  const box = byId("paste-box");
  byId("paste-toggle").addEventListener("click", () => {
    box.hidden = !box.hidden;
  });
  byId("paste-load").addEventListener("click", () => {
    run(async () => {
      await loadPastedHtml(byId<HTMLTextAreaElement>("paste-html").value);
      box.hidden = true;
    });
  });
}
