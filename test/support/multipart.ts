// Multipart form posts through the gateway, as a browser's file input sends them.
import type { TestStack } from "./stack.js";

/** A file part of a form: its bytes and the filename the client gives. */
export interface FilePart {
  bytes: Buffer;
  filename: string;
}

/** POSTs `parts` as multipart/form-data to a gateway path with a bearer key (file parts as blobs). */
export function postMultipart(
  stack: Pick<TestStack, "url">,
  path: string,
  key: string,
  parts: Record<string, string | FilePart>,
): Promise<Response> {
  const form = new FormData();
  for (const [name, value] of Object.entries(parts)) {
    if (typeof value === "string") form.append(name, value);
    else form.append(name, new Blob([new Uint8Array(value.bytes)]), value.filename);
  }
  return fetch(`${stack.url}${path}`, { method: "POST", headers: { Authorization: `Bearer ${key}` }, body: form });
}
