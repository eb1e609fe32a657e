// The body of a pool worker: one task at a time, answered by id. Conversions come back
// sanitized and counted (the same pipeline for every caller: bytes → HTML → sanitize).
import { parentPort } from "node:worker_threads";
import { chunkTexts } from "../chunk-texts.js";
import { convertInProcess } from "../convert-in-process.js";
import { buildExport, sanitizeCounted, scanExportSource } from "../export/export-worker.js";
import { dropSvgImages } from "../svg-images.js";
import { type JobMessage, type ReplyMessage, serializeError, type WorkerTask } from "./protocol.js";

const port = parentPort;
if (!port) throw new Error("worker-main.ts must run in a worker thread");

async function runTask(task: WorkerTask): Promise<{ result: unknown; transfer: ArrayBuffer[] }> {
  switch (task.kind) {
    case "convert": {
      const bytes = Buffer.from(task.bytes.buffer, task.bytes.byteOffset, task.bytes.byteLength);
      const result = await convertInProcess(task.format, task.filename, bytes, task.limits);
      // SVG first: the sanitizer would drop those images silently, and the caller should hear why.
      const html = sanitizeCounted(dropSvgImages(result.html, result.warnings), task.limits.maxElements);
      return { result: { ...result, html }, transfer: [] };
    }
    case "chunk-texts":
      return { result: chunkTexts(task.html, task.maxChars), transfer: [] };
    case "export-scan":
      return { result: scanExportSource(task), transfer: [] };
    case "export-build": {
      const built = await buildExport(task);
      return { result: built, transfer: built.kind === "file" ? [built.bytes.buffer as ArrayBuffer] : [] };
    }
  }
}

port.on("message", async (job: JobMessage) => {
  let reply: ReplyMessage;
  let transfer: ArrayBuffer[] = [];
  try {
    const done = await runTask(job);
    reply = { id: job.id, ok: true, result: done.result };
    transfer = done.transfer;
  } catch (err) {
    reply = { id: job.id, ok: false, error: serializeError(err) };
  }
  port.postMessage(reply, transfer);
});
