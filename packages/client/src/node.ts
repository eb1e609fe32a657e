// @redline/client/node: file-system helpers for Node (the CLI, scripts, tests) on top of the
// browser-safe client.
import { mkdir, readFile, rename, writeFile } from "node:fs/promises";
import { basename, dirname } from "node:path";
import type { ExportDocumentOptions, ExportedFile, RedlineClient, UploadOptions } from "./client.js";
import type { UploadDocumentResponse } from "./types.js";

/** Uploads the file at `path` (its base name picks the converter) with client.upload. */
export async function uploadPath(
  client: RedlineClient,
  path: string,
  opts: UploadOptions & { filename?: string } = {},
): Promise<UploadDocumentResponse> {
  const data = new Uint8Array(await readFile(path));
  return client.upload({ filename: opts.filename ?? basename(path), data }, opts);
}

/**
 * Exports with client.exportDocument and writes the bytes to `outPath` (parent directories
 * created; written to a temporary file renamed over the target, so an interrupted export never
 * leaves a half-written file where the old one was). Returns the export without re-reading it.
 */
export async function exportToFile(
  client: RedlineClient,
  opts: ExportDocumentOptions,
  outPath: string,
): Promise<ExportedFile & { path: string }> {
  const file = await client.exportDocument(opts);
  await mkdir(dirname(outPath), { recursive: true });
  const tmp = `${outPath}.${process.pid}.${Date.now().toString(36)}.tmp`;
  await writeFile(tmp, file.bytes);
  await rename(tmp, outPath);
  return { ...file, path: outPath };
}
