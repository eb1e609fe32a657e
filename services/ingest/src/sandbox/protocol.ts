// Messages between the converter pool and its workers, and how errors cross that boundary
// with their class intact (an InputError in the worker is an InputError for the caller).
import type { status as GrpcStatus } from "@grpc/grpc-js";
import type { RemoteImages } from "@redline/html-chunks";
import { type ErrorPayload, InputError, RedlineError } from "@redline/service-kit";
import type { ExportBuildTask, ExportScanTask } from "../export/export-worker.js";
import { type ConvertLimits, type DocumentFormat, TooManyElementsError } from "../formats.js";

/** One conversion; `bytes` travel to the worker over IPC (structured clone). */
export interface ConvertTask {
  kind: "convert";
  format: DocumentFormat;
  filename: string;
  bytes: Uint8Array;
  limits: ConvertLimits;
  /** Ask for a source map (ConvertOptions.keepSource). */
  keepSource?: boolean;
  /** The pool's policy for remote and relative `<img>` sources (default keep). */
  remoteImages?: RemoteImages;
}

/** Text per chunk of converted HTML (attachment search); answered with `string[]`. */
export interface ChunkTextsTask {
  kind: "chunk-texts";
  html: string;
  maxChars: number;
}

/** Work a pool worker runs: a conversion, one step of an export (export-worker.ts), chunk texts. */
export type WorkerTask = ConvertTask | ExportScanTask | ExportBuildTask | ChunkTextsTask;

/** One task sent to a worker, answered by `id`. */
export type JobMessage = WorkerTask & { id: number };

/** An error as plain data. */
export interface SerializedError {
  name: string;
  message: string;
  redline?: ErrorPayload & { grpcCode: number };
}

/** A worker's answer to one job. */
export type ReplyMessage =
  | { id: number; ok: true; result: unknown }
  | { id: number; ok: false; error: SerializedError };

/** Flattens an error for postMessage, keeping the HTTP shape of RedlineErrors. */
export function serializeError(err: unknown): SerializedError {
  if (err instanceof RedlineError) {
    return { name: err.name, message: err.message, redline: { ...err.toPayload(), grpcCode: err.grpcCode } };
  }
  if (err instanceof Error) return { name: err.name, message: err.message };
  return { name: "Error", message: String(err) };
}

/** Rebuilds an error from a worker: InputError stays InputError; other catalog errors keep their shape. */
export function deserializeError(e: SerializedError): Error {
  const r = e.redline;
  if (r && e.name === "InputError" && typeof r.detail === "string") return new InputError(r.detail, r.body);
  if (r && e.name === "TooManyElementsError")
    return new TooManyElementsError(Number(r.body?.element_count), Number(r.body?.max_elements));
  if (r)
    return new RedlineError(r.httpStatus, r.grpcCode as GrpcStatus, r.detail, { body: r.body, headers: r.headers });
  const err = new Error(`converter failed: ${e.message}`);
  err.name = e.name;
  return err;
}
