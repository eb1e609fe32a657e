// upload: a multipart upload of an HTML file with an embedded image (stored in the object store
// as media); the acknowledged document goes into the ledger with the marker in its text.
import type { ClientState, LoadIo } from "../client.js";

/** A 1×1 PNG (written by us), the image of multipart uploads. */
const PIXEL_PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==";

/** POST /v1/documents/upload of a new marked file. */
export async function upload(io: LoadIo, c: ClientState): Promise<void> {
  const marker = `upload-c${c.index}-m-${++c.uploads}`;
  const html = `<h1>Upload ${c.index}</h1><p>Text ${marker}.</p><p><img src="data:image/png;base64,${PIXEL_PNG}" alt="dot"></p>`;
  const form = new FormData();
  form.append("file", new Blob([html]), `${marker}.html`);
  const a = await io.request(c, "upload", "POST", "/v1/documents/upload", form);
  if (a?.status !== 200) return;
  const body = JSON.parse(a.text) as { durable_document_id: string };
  io.ledger.uploads.push({ client: c.index, kind: "upload", documentId: body.durable_document_id, marker });
}
