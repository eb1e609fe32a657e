// Request bodies: the application size cap (413 as interface-spec Errors rule 5) checked before
// anything else, and JSON parsing whose failures become the spec's 422 `json_invalid` item.
import { randomUUID } from "node:crypto";
import type { IncomingMessage } from "node:http";
import { status as GrpcStatus } from "@grpc/grpc-js";
import { PayloadTooLargeError, RedlineError, SchemaError } from "@redline/service-kit";
import busboy from "busboy";
import express, { type Request, type RequestHandler, type Response } from "express";
import { type GatewayConfig, maxRequestBytes } from "./config.js";
import { requestState } from "./request-context.js";
import { jsonErrorPosition } from "./validation.js";

function megabytes(bytes: number): number {
  return Number((bytes / (1024 * 1024)).toPrecision(4));
}

/** The 413 of Errors rule 5 for a body of `sizeBytes`; logs its support event id. */
export function requestTooLarge(cfg: GatewayConfig, res: Response, sizeBytes: number): PayloadTooLargeError {
  const supportEventId = `evt_${randomUUID().replaceAll("-", "")}`;
  const requestSizeMb = megabytes(sizeBytes);
  requestState(res).log.warn({ supportEventId, requestSizeMb, maxSizeMb: cfg.maxRequestMb }, "request too large");
  return new PayloadTooLargeError(requestSizeMb, cfg.maxRequestMb, cfg.supportEmail, supportEventId);
}

/** Rejects a declared Content-Length over the cap before routing, auth or reading the body. */
export function bodySizeGuard(cfg: GatewayConfig): RequestHandler {
  const limit = maxRequestBytes(cfg);
  return (req, res, next) => {
    const declared = Number(req.get("content-length"));
    if (Number.isFinite(declared) && declared > limit) {
      // The body stays unread; closing the connection keeps it out of the next request.
      res.setHeader("Connection", "close");
      next(requestTooLarge(cfg, res, declared));
      return;
    }
    next();
  };
}

function isJsonContentType(req: IncomingMessage): boolean {
  const header = req.headers["content-type"];
  if (!header) return true;
  const mediaType = header.split(";")[0].trim().toLowerCase();
  return mediaType === "application/json" || (mediaType.startsWith("application/") && mediaType.endsWith("+json"));
}

interface BodyParserError {
  type?: string;
  status?: number;
  expose?: boolean;
  message: string;
  body?: string;
  length?: number;
  received?: number;
}

function asBodyParserError(err: unknown): BodyParserError | null {
  if (typeof err !== "object" || err === null || !("type" in err) || !(err instanceof Error)) return null;
  return err as Error & BodyParserError;
}

/**
 * Parses JSON bodies (content type application/json, application/*+json, or none) up to the
 * cap. Over the cap → PayloadTooLargeError (413); malformed → SchemaError (422) with
 * `{type: "json_invalid", loc: ["body", <offset>], msg}`; unsupported charset or encoding → 415.
 * NUL characters are removed from every string.
 */
export function jsonBody(cfg: GatewayConfig): RequestHandler {
  const parse = express.json({
    limit: maxRequestBytes(cfg),
    strict: false,
    type: isJsonContentType,
    // NUL never means anything in text and Postgres text cannot store it: drop it at the edge.
    reviver: (_key, value) => (typeof value === "string" && value.includes("\0") ? value.replaceAll("\0", "") : value),
  });
  return (req, res, next) => {
    parse(req, res, (err?: unknown) => {
      if (!err) return next();
      const e = asBodyParserError(err);
      if (!e) return next(err);
      if (e.type === "entity.too.large") {
        res.setHeader("Connection", "close");
        return next(requestTooLarge(cfg, res, e.length ?? e.received ?? maxRequestBytes(cfg) + 1));
      }
      if (e.type === "entity.parse.failed") {
        const position = jsonErrorPosition(e.body ?? "");
        return next(new SchemaError([{ type: "json_invalid", loc: ["body", position], msg: "JSON decode error" }]));
      }
      if (e.status === 415) return next(new RedlineError(415, GrpcStatus.INVALID_ARGUMENT, e.message));
      if (e.status && e.status >= 400 && e.status < 500 && e.expose) {
        return next(new RedlineError(e.status, GrpcStatus.INVALID_ARGUMENT, e.message));
      }
      return next(err);
    });
  };
}

/** True when the request carries a body (Content-Length > 0 or chunked). */
export function hasBody(req: Request): boolean {
  if (req.headers["transfer-encoding"] !== undefined) return true;
  const length = Number(req.headers["content-length"]);
  return Number.isFinite(length) && length > 0;
}

/** A file part of a multipart body, as handed to a route's body schema. */
export interface UploadedFile {
  filename: string;
  mimeType: string;
  content: Buffer;
}

/** True for `multipart/form-data` requests. */
function isMultipart(req: IncomingMessage): boolean {
  return (req.headers["content-type"] ?? "").split(";")[0].trim().toLowerCase() === "multipart/form-data";
}

/**
 * Parses `multipart/form-data` bodies (uploads) with busboy into `req.body`: text fields as
 * strings, file fields as UploadedFile. Other content types pass through untouched. A body over
 * the cap → 413 (rule 5) as soon as the cap is crossed; a malformed body → 400.
 */
export function multipartBody(cfg: GatewayConfig): RequestHandler {
  const limit = maxRequestBytes(cfg);
  return (req, res, next) => {
    if (!isMultipart(req)) return next();
    let parser: busboy.Busboy;
    try {
      parser = busboy({ headers: req.headers, limits: { fileSize: limit, files: 5, fields: 50 } });
    } catch (err) {
      return next(
        new RedlineError(400, GrpcStatus.INVALID_ARGUMENT, `Malformed multipart body: ${(err as Error).message}`),
      );
    }
    const body: Record<string, string | UploadedFile> = {};
    let total = 0;
    let failed = false;
    const fail = (err: RedlineError) => {
      if (failed) return;
      failed = true;
      req.unpipe(parser);
      res.setHeader("Connection", "close");
      req.resume();
      next(err);
    };
    parser.on("field", (name, value) => {
      body[name] = value;
    });
    parser.on("file", (name, stream, info) => {
      const parts: Buffer[] = [];
      stream.on("data", (chunk: Buffer) => {
        total += chunk.length;
        parts.push(chunk);
      });
      stream.on("limit", () => fail(requestTooLarge(cfg, res, limit + 1)));
      stream.on("end", () => {
        body[name] = { filename: info.filename ?? "", mimeType: info.mimeType, content: Buffer.concat(parts) };
      });
    });
    parser.on("error", (err: Error) =>
      fail(new RedlineError(400, GrpcStatus.INVALID_ARGUMENT, `Malformed multipart body: ${err.message}`)),
    );
    parser.on("close", () => {
      if (failed) return;
      if (total > limit) return fail(requestTooLarge(cfg, res, total));
      req.body = body;
      next();
    });
    req.pipe(parser);
  };
}
