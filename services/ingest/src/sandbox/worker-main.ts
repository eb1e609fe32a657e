// The body of a pool worker: one task at a time, answered by id. Conversions come back
// sanitized and counted (the same pipeline for every caller: bytes → HTML → sanitize).
import { chunkTexts } from "../chunk-texts.js";
import { convertInProcess } from "../convert-in-process.js";
import { buildExport, sanitizeCounted, scanExportSource } from "../export/export-worker.js";
import { dropSvgImages } from "../svg-images.js";
import { type JobMessage, type ReplyMessage, serializeError, type WorkerTask } from "./protocol.js";

const send = process.send?.bind(process);
if (!send) throw new Error("worker-main.ts must run in a forked worker process");
// The pool is gone (ingest exited or died): nothing is left to answer.
process.on("disconnect", () => process.exit(0));

async function runTask(task: WorkerTask): Promise<unknown> {
  switch (task.kind) {
    case "convert": {
      const bytes = Buffer.from(task.bytes.buffer, task.bytes.byteOffset, task.bytes.byteLength);
      const result = await convertInProcess(task.format, task.filename, bytes, task.limits, {
        keepSource: task.keepSource,
      });
      // SVG first: the sanitizer would drop those images silently, and the caller should hear why.
      const html = sanitizeCounted(dropSvgImages(result.html, result.warnings), task.limits.maxElements, {
        remoteImages: task.remoteImages,
      });
      return { ...result, html };
    }
    case "chunk-texts":
      return chunkTexts(task.html, task.maxChars);
    case "export-scan":
      return scanExportSource(task);
    case "export-build":
      return buildExport(task);
  }
}

process.on("message", async (job: JobMessage) => {
  let reply: ReplyMessage;
  try {
    reply = { id: job.id, ok: true, result: await runTask(job) };
  } catch (err) {
    reply = { id: job.id, ok: false, error: serializeError(err) };
  }
  send(reply);
});
