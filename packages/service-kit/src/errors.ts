// The error catalog. Domain code throws these; each service maps them to gRPC once (rpc.ts,
// errorToGrpc) and the gateway maps them back to the spec's HTTP status and body once
// (services/gateway/src/error-handler.ts).
import { status as GrpcStatus } from "@grpc/grpc-js";

/** One item of a 422 body: `{type, loc, msg}` (interface-spec, Errors). */
export interface ValidationIssue {
  type: string;
  loc: (string | number)[];
  msg: string;
}

/** Serialized form carried in the `redline-error-bin` trailer between services and gateway. */
export interface ErrorPayload {
  httpStatus: number;
  /** `detail` of the HTTP body: a string, validation issues, or an object (export 413). */
  detail: string | ValidationIssue[] | Record<string, unknown>;
  /** Extra top-level body fields, e.g. `code`, `open_in_sessions`. */
  body?: Record<string, unknown>;
  /** Extra HTTP headers, e.g. Retry-After and X-Usage-*. */
  headers?: Record<string, string>;
}

/** Base of every expected error; `httpStatus` and `grpcCode` say how it crosses each boundary. */
export class RedlineError extends Error {
  readonly httpStatus: number;
  readonly grpcCode: GrpcStatus;
  readonly detail: ErrorPayload["detail"];
  readonly body?: Record<string, unknown>;
  readonly headers?: Record<string, string>;

  constructor(
    httpStatus: number,
    grpcCode: GrpcStatus,
    detail: ErrorPayload["detail"],
    extra: { body?: Record<string, unknown>; headers?: Record<string, string> } = {},
  ) {
    super(typeof detail === "string" ? detail : JSON.stringify(detail));
    this.name = new.target.name;
    this.httpStatus = httpStatus;
    this.grpcCode = grpcCode;
    this.detail = detail;
    this.body = extra.body;
    this.headers = extra.headers;
  }

  toPayload(): ErrorPayload {
    return { httpStatus: this.httpStatus, detail: this.detail, body: this.body, headers: this.headers };
  }
}

/** 400: the request is well-formed but its values are unusable (empty message, legacy parts). */
export class InputError extends RedlineError {
  constructor(detail: string, body?: Record<string, unknown>) {
    super(400, GrpcStatus.INVALID_ARGUMENT, detail, { body });
  }
}

/** 422: the body does not match the schema; detail is a list of `{type, loc, msg}`. */
export class SchemaError extends RedlineError {
  constructor(issues: ValidationIssue[]) {
    super(422, GrpcStatus.INVALID_ARGUMENT, issues);
  }
}

/** 401: missing, malformed, unknown or revoked credentials. */
export class UnauthenticatedError extends RedlineError {
  constructor(detail = "Invalid or missing API key") {
    super(401, GrpcStatus.UNAUTHENTICATED, detail);
  }
}

/** 403: the caller may not do this (a role, an agent's key); `body` carries a machine-readable code. */
export class ForbiddenError extends RedlineError {
  constructor(detail: string, body?: Record<string, unknown>) {
    super(403, GrpcStatus.PERMISSION_DENIED, detail, { body });
  }
}

/** 404: unknown, or not the caller's. */
export class NotFoundError extends RedlineError {
  constructor(detail: string) {
    super(404, GrpcStatus.NOT_FOUND, detail);
  }
}

/** 409: the state forbids the action; `body` carries the machine-readable reason. */
export class ConflictError extends RedlineError {
  constructor(detail: string, body?: Record<string, unknown>) {
    super(409, GrpcStatus.FAILED_PRECONDITION, detail, { body });
  }
}

/** 413: a payload over the application cap (interface-spec Errors rule 5). */
export class PayloadTooLargeError extends RedlineError {
  constructor(requestSizeMb: number, maxSizeMb: number, supportEmail: string, supportEventId: string) {
    super(413, GrpcStatus.INVALID_ARGUMENT, `Request of ${requestSizeMb} MB exceeds the ${maxSizeMb} MB limit`, {
      body: {
        error_code: "request_too_large",
        message_user: `This request is too large (${requestSizeMb} MB; the limit is ${maxSizeMb} MB). Split it into smaller parts.`,
        request_size_mb: requestSizeMb,
        max_size_mb: maxSizeMb,
        suggested_action: "split_request",
        contact_email: supportEmail,
        support_event_id: supportEventId,
      },
    });
  }
}

/** 415: an upload extension outside the supported list; detail names the list (rule 1). */
export class UnsupportedMediaTypeError extends RedlineError {
  constructor(extension: string, supported: readonly string[]) {
    super(
      415,
      GrpcStatus.INVALID_ARGUMENT,
      `Unsupported file type '${extension || "(none)"}'. Supported extensions: ${supported.join(", ")}`,
      { body: { code: "unsupported_media_type", supported_extensions: [...supported] } },
    );
  }
}

/** 429: the monthly quota is spent; carries Retry-After and X-Usage-* (rule 2). */
export class QuotaExceededError extends RedlineError {
  constructor(
    limit: number,
    used: number,
    retryAfterSeconds: number,
    usage: Record<string, unknown>,
    detail = "Monthly operations quota exhausted",
  ) {
    super(429, GrpcStatus.RESOURCE_EXHAUSTED, detail, {
      body: { code: "quota_exhausted", usage },
      headers: {
        "Retry-After": String(Math.max(1, Math.ceil(retryAfterSeconds))),
        "X-Usage-Limit": String(limit),
        "X-Usage-Used": String(used),
        "X-Usage-Remaining": String(Math.max(0, limit - used)),
      },
    });
  }
}

/** 504: synchronous AI processing passed the wall-clock cap (rule 3); detail is plain text. */
export class AiTimeoutError extends RedlineError {
  constructor(detail?: string) {
    super(504, GrpcStatus.DEADLINE_EXCEEDED, detail ?? "AI processing exceeded the time limit");
  }
}

/** 503: a dependency is unavailable; safe to retry (with `retryAfterSeconds`, a Retry-After header). */
export class UnavailableError extends RedlineError {
  constructor(detail: string, opts: { retryAfterSeconds?: number } = {}) {
    super(
      503,
      GrpcStatus.UNAVAILABLE,
      detail,
      opts.retryAfterSeconds ? { headers: { "Retry-After": String(opts.retryAfterSeconds) } } : {},
    );
  }
}

/** Node network error codes that mean a dependency cannot be reached right now. */
const NETWORK_CODES = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "EPIPE",
  "ETIMEDOUT",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "EAI_AGAIN",
  "ECONNABORTED",
]);

/** SQLSTATEs of a Postgres that is going away or not yet up: admin/crash shutdown, cannot connect now, class 08. */
const PG_UNAVAILABLE = /^(57P0[123]|08...)$/;

/** Messages of pg and knex for a lost or unobtainable connection (they carry no code). */
const PG_CONNECTION_MESSAGES =
  /Connection terminated|Timeout acquiring a connection|Client has encountered a connection error|connection is closed|Client was closed/i;

/** `err`, its causes and (AggregateError) its parts: a network failure may be wrapped. */
function errorChain(err: unknown): Error[] {
  const out: Error[] = [];
  const visit = (e: unknown, depth: number) => {
    if (!(e instanceof Error) || depth > 5 || out.includes(e)) return;
    out.push(e);
    visit((e as Error & { cause?: unknown }).cause, depth + 1);
    if (e instanceof AggregateError) for (const part of e.errors) visit(part, depth + 1);
  };
  visit(err, 0);
  return out;
}

/** SQLSTATEs of a transaction Postgres rolled back under contention (serialization failure, deadlock). */
const PG_CONTENTION = /^(40001|40P01)$/;

/**
 * A 503 for an error that means Postgres cannot be reached (connection refused or lost, the
 * server shutting down or starting, the pool unable to get a connection) or rolled the request's
 * transaction back under contention (a retry succeeds); null for any other error. Services map
 * it at their RPC boundary, so a client sees 503 + Retry-After instead of 500.
 */
export function databaseUnavailable(err: unknown): UnavailableError | null {
  for (const e of errorChain(err)) {
    const code = (e as Error & { code?: unknown }).code;
    if (typeof code === "string" && PG_CONTENTION.test(code))
      return new UnavailableError("The request conflicted with concurrent ones; retry shortly", {
        retryAfterSeconds: 1,
      });
    if (
      (typeof code === "string" && (NETWORK_CODES.has(code) || PG_UNAVAILABLE.test(code))) ||
      e.name === "KnexTimeoutError" ||
      PG_CONNECTION_MESSAGES.test(e.message)
    ) {
      return new UnavailableError("The database is unavailable; retry shortly", { retryAfterSeconds: 2 });
    }
  }
  return null;
}

/** True when `err` (or its cause) is a network failure reaching a dependency (refused, reset, timed out). */
export function isNetworkFailure(err: unknown): boolean {
  return errorChain(err).some((e) => {
    const code = (e as Error & { code?: unknown }).code;
    return typeof code === "string" && NETWORK_CODES.has(code);
  });
}

/**
 * The value of an optional proto field the callee always sets (a message field is optional in
 * ts-proto even when the RPC's contract says it is present). Throws a plain Error naming the
 * field, which the error middleware maps to 500: a broken contract is our bug, not the client's.
 */
export function required<T>(value: T | undefined | null, field: string): T {
  if (value === undefined || value === null) throw new Error(`contract: ${field} is missing from the response`);
  return value;
}
