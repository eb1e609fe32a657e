// The one place where errors become HTTP (STYLE practice 5): RedlineErrors, local or from a
// service, keep their status, `{detail, ...body}` and headers; anything else is a 500 with no
// internals. Unknown routes and methods are a JSON 404.
import { status as GrpcStatus } from "@grpc/grpc-js";
import { RedlineError, RemoteError, UnavailableError } from "@redline/service-kit";
import type { ErrorRequestHandler, RequestHandler } from "express";
import { hasBody } from "./body.js";
import { requestState } from "./request-context.js";

/** Final handler for requests no route matched: 404 `{detail}` naming the method and path. */
export const notFound: RequestHandler = (req, res) => {
  const path = req.path.replace(/[^\x20-\x7e]/g, "?").slice(0, 200);
  res
    .status(404)
    .json({ detail: `Not Found: no route for ${req.method} ${path}; the routes are listed at /openapi.json` });
};

interface HttpReply {
  status: number;
  body: Record<string, unknown>;
  headers: Record<string, string>;
}

const INTERNAL: HttpReply = { status: 500, body: { detail: "Internal server error" }, headers: {} };

/** An http-errors style 4xx that is safe to show (e.g. Express's 400 for a malformed path escape). */
function clientHttpError(err: unknown): { status: number; message: string } | null {
  if (!(err instanceof Error)) return null;
  const { status, expose } = err as Error & { status?: unknown; expose?: unknown };
  if (typeof status === "number" && status >= 400 && status < 500 && expose === true) {
    return { status, message: err.message };
  }
  return null;
}

/** Maps an error to the HTTP reply the spec prescribes; `log` records what the caller must not see. */
export function toHttpReply(err: unknown, log: (level: "warn" | "error", msg: string) => void): HttpReply {
  if (err instanceof RedlineError) {
    const remote = err instanceof RemoteError;
    if (!remote && err instanceof UnavailableError) {
      // The client's message names the internal RPC path; the caller gets a generic one.
      log("warn", `dependency unavailable: ${err.message}`);
      return {
        status: 503,
        body: { detail: "Service temporarily unavailable; retry shortly" },
        headers: { "Retry-After": "1" },
      };
    }
    if (!remote && err.httpStatus === 504 && err.grpcCode === GrpcStatus.DEADLINE_EXCEEDED && !err.body) {
      log("warn", `dependency timed out: ${err.message}`);
      return { status: 504, body: { detail: "An internal service did not answer in time" }, headers: {} };
    }
    if (err.httpStatus >= 500 && err.httpStatus !== 503 && err.httpStatus !== 504) {
      log("error", `service error: ${err.message}`);
      return INTERNAL;
    }
    const { detail: _ignored, ...extra } = err.body ?? {};
    // Every 503 is retryable: a client is told when, even if the service did not say.
    const retry: Record<string, string> =
      err.httpStatus === 503 && !err.headers?.["Retry-After"] ? { "Retry-After": "1" } : {};
    return { status: err.httpStatus, body: { detail: err.detail, ...extra }, headers: { ...retry, ...err.headers } };
  }
  const clientError = clientHttpError(err);
  if (clientError) return { status: clientError.status, body: { detail: clientError.message }, headers: {} };
  log("error", "unexpected error");
  return INTERNAL;
}

/** Express error middleware over toHttpReply; 5xx are logged with the request id. */
export const errorHandler: ErrorRequestHandler = (err, req, res, next) => {
  const state = requestState(res);
  if (res.headersSent) {
    state.log.error({ err }, "error after the response started");
    next(err);
    return;
  }
  const reply = toHttpReply(err, (level, msg) => state.log[level]({ err }, msg));
  const send = () => {
    if (res.headersSent) return;
    for (const [name, value] of Object.entries(reply.headers)) res.setHeader(name, value);
    res.status(reply.status).json(reply.body);
  };
  if (!req.complete && hasBody(req)) {
    // A 503 before the body was read (a dependency down at auth): a client still sending would
    // see the close as a reset, not the answer it may retry on. A small body is read and dropped.
    const length = Number(req.headers["content-length"]);
    if (reply.status === 503 && Number.isFinite(length) && length <= DRAIN_BEFORE_503_BYTES) {
      const timer = setTimeout(() => {
        res.setHeader("Connection", "close");
        send();
      }, 5_000);
      req.once("end", () => {
        clearTimeout(timer);
        send();
      });
      req.once("error", () => clearTimeout(timer));
      req.resume();
      return;
    }
    // Answered before the body was read (401, 415, 413...): closing the connection keeps the
    // unread bytes from being taken as the next request, and the server from reading them all.
    res.setHeader("Connection", "close");
  }
  send();
};

/** Largest unread body read and dropped before a 503, so the client gets the answer (bytes). */
const DRAIN_BEFORE_503_BYTES = 1024 * 1024;

/** What Node's HTTP parser refused, in words a caller can act on (llhttp error codes). */
const PARSE_ERRORS: Record<string, [number, string]> = {
  HPE_HEADER_OVERFLOW: [431, "Request line and headers are over the 16 KB limit; send large values in the body"],
  HPE_INVALID_METHOD: [400, "Malformed request line: the method is not an HTTP method"],
  HPE_INVALID_URL: [400, "Malformed request target: it must be an absolute path such as /v1/sessions"],
  HPE_INVALID_HEADER_TOKEN: [400, "Malformed header: a header name or value holds a character HTTP does not allow"],
  HPE_INVALID_CONTENT_LENGTH: [400, "Content-Length must be a single non-negative decimal number"],
  HPE_UNEXPECTED_CONTENT_LENGTH: [400, "Send either Content-Length or Transfer-Encoding: chunked, not both"],
  HPE_INVALID_TRANSFER_ENCODING: [
    400,
    "Transfer-Encoding must be chunked (and last) when sent, and not sent together with Content-Length",
  ],
  HPE_INVALID_CHUNK_SIZE: [400, "Malformed chunked body: a chunk size is not hexadecimal"],
  HPE_INVALID_VERSION: [400, "Malformed request line: the HTTP version must be HTTP/1.0 or HTTP/1.1"],
  ERR_HTTP_REQUEST_TIMEOUT: [408, "The request was not completed within the server's time limit"],
};

/**
 * Node `clientError` listener: a request the HTTP parser refuses never reaches Express, and Node
 * would answer a bare 400/431 with no body. This answers `{detail}` naming the problem (Errors
 * rule: every 4xx says what to fix) and closes the connection, whose state is unknown.
 */
export function onClientError(err: Error & { code?: string }, socket: import("node:stream").Duplex): void {
  if (err.code === "ECONNRESET" || !socket.writable) {
    socket.destroy();
    return;
  }
  const [status, detail] = PARSE_ERRORS[err.code ?? ""] ?? [400, `Malformed HTTP request (${err.code ?? "unknown"})`];
  const body = JSON.stringify({ detail });
  const reason =
    status === 431 ? "Request Header Fields Too Large" : status === 408 ? "Request Timeout" : "Bad Request";
  socket.end(
    `HTTP/1.1 ${status} ${reason}\r\nContent-Type: application/json; charset=utf-8\r\n` +
      `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
  );
}
