// Request bodies: the application size cap (413 as interface-spec Errors rule 5) checked before
// anything else, the media type and encoding a route accepts (415), and JSON and multipart
// parsing whose failures become the spec's 4xx bodies. Bodies are parsed only after auth.
import { randomUUID } from "node:crypto";
import type { IncomingMessage } from "node:http";
import { status as GrpcStatus } from "@grpc/grpc-js";
import { PayloadTooLargeError, RedlineError, SchemaError, type ValidationIssue } from "@redline/service-kit";
import busboy from "busboy";
import express, { type Request, type RequestHandler, type Response } from "express";
import { type GatewayConfig, maxRequestBytes } from "./config.js";
import { requestState } from "./request-context.js";
import { jsonErrorPosition } from "./validation.js";

function megabytes(bytes: number): number {
  return Number((bytes / (1024 * 1024)).toPrecision(4));
}

/** The 413 of Errors rule 5 for a body of `sizeBytes`; logs its support event id. */
function requestTooLarge(cfg: GatewayConfig, res: Response, sizeBytes: number): PayloadTooLargeError {
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

/** A UTF-16 surrogate not part of a pair (with the u flag, a pair is one code point and never matches). */
const LONE_SURROGATE = /\p{Surrogate}/u;

/** True when `value` holds a lone surrogate: not valid Unicode, cannot be encoded as UTF-8. */
function hasLoneSurrogate(value: string): boolean {
  return LONE_SURROGATE.test(value);
}

/** The media type of the request without parameters, lower case; "" when there is none. */
function mediaTypeOf(req: IncomingMessage): string {
  return (req.headers["content-type"] ?? "").split(";")[0].trim().toLowerCase();
}

function isJsonMediaType(mediaType: string): boolean {
  return mediaType === "application/json" || (mediaType.startsWith("application/") && mediaType.endsWith("+json"));
}

function isJsonContentType(req: IncomingMessage): boolean {
  const mediaType = mediaTypeOf(req);
  return mediaType === "" || isJsonMediaType(mediaType);
}

/** Content-Encodings the JSON parser inflates (body-parser 2); multipart bodies take identity only. */
const JSON_CONTENT_ENCODINGS = ["identity", "gzip", "deflate", "br"] as const;

/** Deepest JSON nesting a body may have; real request bodies stay under 10 levels. */
export const MAX_JSON_DEPTH = 64;

function unsupportedMediaType(detail: string): RedlineError {
  return new RedlineError(415, GrpcStatus.INVALID_ARGUMENT, detail);
}

/**
 * Checks, before any byte of the body is read, that the request's Content-Type and
 * Content-Encoding are ones `bodyMediaType` (a route's declared body type) accepts:
 * JSON routes take application/json, application/*+json or no Content-Type, in identity, gzip,
 * deflate or br; multipart routes take multipart/form-data in identity. Otherwise 415 with a
 * detail naming the header, what was sent and what is accepted. Requests without a body pass.
 */
export function bodyTypeGuard(bodyMediaType: string): RequestHandler {
  const multipart = bodyMediaType === "multipart/form-data";
  const accepted = multipart ? "multipart/form-data" : "application/json";
  const encodings: readonly string[] = multipart ? ["identity"] : JSON_CONTENT_ENCODINGS;
  return (req, _res, next) => {
    if (!hasBody(req)) return next();
    const mediaType = mediaTypeOf(req);
    const ok = multipart ? mediaType === "multipart/form-data" : isJsonContentType(req);
    if (!ok) {
      const got = mediaType === "" ? "none" : printable(mediaType);
      return next(unsupportedMediaType(`Content-Type must be ${accepted} for this route; got ${got}`));
    }
    const encoding = (req.headers["content-encoding"] ?? "identity").trim().toLowerCase() || "identity";
    if (!encodings.includes(encoding)) {
      return next(
        unsupportedMediaType(
          `Content-Encoding must be ${encodings.join(", ")} for a ${multipart ? "multipart/form-data" : "JSON"} body; got ${printable(encoding)}`,
        ),
      );
    }
    next();
  };
}

/** A header value as safe, short text for a detail message. */
function printable(value: string): string {
  const clean = value.replace(/[^\x20-\x7e]/g, "?");
  return clean.length > 100 ? `${clean.slice(0, 100)}…` : clean;
}

interface BodyParserError {
  type?: string;
  status?: number;
  expose?: boolean;
  message: string;
  body?: string;
  length?: number;
  received?: number;
  charset?: string;
}

function asBodyParserError(err: unknown): BodyParserError | null {
  // Decoding failures (zlib) come through as the raw Error with only a status set.
  if (!(err instanceof Error) || !("type" in err || "status" in err)) return null;
  return err as Error & BodyParserError;
}

/**
 * Checks a parsed JSON value without recursion: nesting at most MAX_JSON_DEPTH, every string and
 * key well-formed UTF-16 (no lone surrogates, which cannot be encoded as UTF-8), and NUL removed
 * from string values (it never means anything in text and Postgres text cannot store it).
 * Returns the first problem as a 422 item, or null.
 */
export function inspectJson(root: unknown): ValidationIssue | null {
  // Frames point at their parent so a `loc` is only built for the one value that fails.
  type Frame = { value: unknown; depth: number; parent: Frame | null; key: string | number };
  const locOf = (frame: Frame): (string | number)[] => {
    const path: (string | number)[] = [];
    for (let f: Frame | null = frame; f?.parent; f = f.parent) path.unshift(f.key);
    return ["body", ...path];
  };
  const badString = (frame: Frame): ValidationIssue => ({
    type: "string_unicode",
    loc: locOf(frame),
    msg: "Input should be a valid string: it holds a lone UTF-16 surrogate (\\ud800-\\udfff) that is not valid Unicode",
  });
  const stack: Frame[] = [{ value: root, depth: 0, parent: null, key: "" }];
  while (stack.length > 0) {
    const frame = stack.pop() as Frame;
    const { value, depth } = frame;
    if (typeof value === "string") {
      if (hasLoneSurrogate(value)) return badString(frame);
      continue;
    }
    if (typeof value !== "object" || value === null) continue;
    if (depth >= MAX_JSON_DEPTH) {
      return {
        type: "json_too_deep",
        loc: locOf(frame),
        msg: `JSON nested deeper than ${MAX_JSON_DEPTH} levels; request bodies must nest at most ${MAX_JSON_DEPTH} levels`,
      };
    }
    const visit = (container: Record<string | number, unknown>, key: string | number) => {
      let child = container[key];
      if (typeof child === "string" && child.includes("\0")) {
        child = child.replaceAll("\0", "");
        container[key] = child;
      }
      if (typeof child === "object" || typeof child === "string") {
        stack.push({ value: child, depth: depth + 1, parent: frame, key });
      }
    };
    if (Array.isArray(value)) {
      // Index loop: Object.keys would allocate a string per element of a huge array.
      for (let i = 0; i < value.length; i++) visit(value as unknown as Record<number, unknown>, i);
    } else {
      for (const key of Object.keys(value)) {
        if (hasLoneSurrogate(key)) return badString({ value: key, depth, parent: frame, key });
        visit(value as Record<string, unknown>, key);
      }
    }
  }
  return null;
}

/**
 * Parses JSON bodies (content type application/json, application/*+json, or none) up to the
 * cap. Over the cap → PayloadTooLargeError (413); malformed → SchemaError (422) with
 * `{type: "json_invalid", loc: ["body", <offset>], msg}`; nested deeper than MAX_JSON_DEPTH or
 * holding lone surrogates → 422 (see inspectJson); unsupported charset or encoding → 415; a body
 * that cannot be inflated or ends early → 400 naming the header. NUL is removed from every string.
 */
export function jsonBody(cfg: GatewayConfig): RequestHandler {
  const parse = express.json({ limit: maxRequestBytes(cfg), strict: false, type: isJsonContentType });
  return (req, res, next) => {
    parse(req, res, (err?: unknown) => {
      if (!err) {
        const issue = req.body === undefined ? null : inspectJson(req.body);
        if (typeof req.body === "string" && req.body.includes("\0")) req.body = req.body.replaceAll("\0", "");
        return next(issue ? new SchemaError([issue]) : undefined);
      }
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
      if (e.type === "charset.unsupported") {
        return next(
          unsupportedMediaType(
            `Content-Type charset must be utf-8 (or utf-16/utf-32) for a JSON body; got ${printable(e.charset ?? "")}`,
          ),
        );
      }
      if (e.type === "encoding.unsupported" || e.status === 415) {
        const got = printable(String(req.headers["content-encoding"] ?? ""));
        return next(unsupportedMediaType(`Content-Encoding must be ${JSON_CONTENT_ENCODINGS.join(", ")}; got ${got}`));
      }
      res.setHeader("Connection", "close");
      if (e.type === "request.aborted") {
        return next(new RedlineError(400, GrpcStatus.INVALID_ARGUMENT, "Request body ended early: the client aborted"));
      }
      if (e.type === "request.size.invalid") {
        return next(
          new RedlineError(400, GrpcStatus.INVALID_ARGUMENT, "Content-Length does not match the body's size"),
        );
      }
      const encoding = (req.headers["content-encoding"] ?? "identity").toLowerCase();
      if (encoding !== "identity" && e.status === 400) {
        return next(
          new RedlineError(
            400,
            GrpcStatus.INVALID_ARGUMENT,
            `Body could not be decoded as Content-Encoding ${printable(encoding)}: ${printable(e.message)}`,
          ),
        );
      }
      if (e.status && e.status >= 400 && e.status < 500 && e.expose) {
        return next(new RedlineError(e.status, GrpcStatus.INVALID_ARGUMENT, `Request body: ${printable(e.message)}`));
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
  return mediaTypeOf(req) === "multipart/form-data";
}

const ENDED_EARLY = "Malformed multipart body: the upload ended early (a part or the closing boundary is missing)";

/**
 * Parses `multipart/form-data` bodies (uploads) with busboy into `req.body`: text fields as
 * strings, file fields as UploadedFile. Other content types pass through untouched. A body over
 * the cap → 413 (rule 5) as soon as the cap is crossed; a malformed or truncated body → 400.
 * Every stream (request, parser, each file part) has an error listener: a body that stops
 * mid-part must answer 400, never crash the process.
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
        new RedlineError(
          400,
          GrpcStatus.INVALID_ARGUMENT,
          `Content-Type multipart/form-data needs a boundary parameter: ${printable((err as Error).message)}`,
        ),
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
    const malformed = (err: Error) =>
      fail(
        new RedlineError(
          400,
          GrpcStatus.INVALID_ARGUMENT,
          /unexpected end/i.test(err.message) ? ENDED_EARLY : `Malformed multipart body: ${printable(err.message)}`,
        ),
      );
    req.on("error", () => fail(new RedlineError(400, GrpcStatus.INVALID_ARGUMENT, ENDED_EARLY)));
    req.on("aborted", () => fail(new RedlineError(400, GrpcStatus.INVALID_ARGUMENT, ENDED_EARLY)));
    // Part names are caller-chosen keys: never let one reach an object's prototype.
    const unsafeName = (name: string) => name === "__proto__" || name === "constructor" || name === "prototype";
    parser.on("field", (name, value) => {
      if (!unsafeName(name)) body[name] = value;
    });
    parser.on("file", (name, stream, info) => {
      if (unsafeName(name)) {
        stream.resume();
        return;
      }
      const parts: Buffer[] = [];
      // busboy emits "error" on the part itself when the body stops inside it.
      stream.on("error", malformed);
      stream.on("data", (chunk: Buffer) => {
        total += chunk.length;
        parts.push(chunk);
      });
      stream.on("limit", () => fail(requestTooLarge(cfg, res, limit + 1)));
      stream.on("end", () => {
        body[name] = { filename: info.filename ?? "", mimeType: info.mimeType, content: Buffer.concat(parts) };
      });
    });
    parser.on("error", malformed);
    parser.on("close", () => {
      if (failed) return;
      if (total > limit) return fail(requestTooLarge(cfg, res, total));
      req.body = body;
      next();
    });
    req.pipe(parser);
  };
}
