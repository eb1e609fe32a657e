// The body of a converter worker: one job at a time, answered by id.
import { parentPort } from "node:worker_threads";
import { convertInProcess } from "../convert-in-process.js";
import { type JobMessage, type ReplyMessage, serializeError } from "./protocol.js";

const port = parentPort;
if (!port) throw new Error("worker-main.ts must run in a worker thread");

port.on("message", async (job: JobMessage) => {
  let reply: ReplyMessage;
  try {
    const bytes = Buffer.from(job.bytes.buffer, job.bytes.byteOffset, job.bytes.byteLength);
    reply = { id: job.id, ok: true, result: await convertInProcess(job.format, job.filename, bytes, job.limits) };
  } catch (err) {
    reply = { id: job.id, ok: false, error: serializeError(err) };
  }
  port.postMessage(reply);
});
