// Idempotency-Key (issue #13) on the routes that declare it (chat, async chat, uploads,
// attachment uploads, re-edit): a client that timed out may retry with the same key, and the
// retry answers the first response (status, body, Content-Type and X-Usage-*) without running
// the request again, so it is charged once. Records live in the billing process (EdgePolicyService
// BeginIdempotency / CompleteIdempotency), scoped to the key owner, for 24 h.
//
// Semantics, chosen here:
// - same key, same request (method, path, query and canonical body): the stored response, with
//   `Idempotent-Replayed: true`;
// - same key, another request: 422, `{detail: [{type: "idempotency_key_reused", loc: ["header",
//   "Idempotency-Key"], msg}]}` (the spec's validation body), nothing runs;
// - same key while the first request still runs: the retry waits up to 2 s for the first answer
//   (then answers it), else 409 `{detail, code: "idempotency_in_progress"}` with Retry-After: 1,
//   rather than holding the retry's connection open for up to the 30-minute AI cap; if the first
//   ends in a released key (5xx) within those 2 s, the retry runs the request itself;
// - what is kept: 2xx and 4xx answers (deterministic for that body). 5xx and 429 (transient: a
//   dependency, the quota) release the key, so the retry runs the request again.
import { createHash } from "node:crypto";
import { status as GrpcStatus } from "@grpc/grpc-js";
import { edgePolicyV1 } from "@redline/grpc-stubs";
import { InputError, RedlineError, SchemaError } from "@redline/service-kit";
import type { Request, RequestHandler, Response } from "express";
import type { UploadedFile } from "./body.js";
import { CHAT_DEADLINE_GRACE_MS, type GatewayConfig } from "./config.js";
import type { GatewayContext } from "./context.js";
import { rateLimitDecision } from "./rate-limit.js";
import { requestState } from "./request-context.js";

/** The key as the client sends it: 1-255 printable ASCII characters (as Stripe and the IETF idempotency draft allow). */
const KEY = /^[\x21-\x7e]{1,255}$/;
const BEGIN_TIMEOUT_MS = 5000;
/** How long a duplicate of a running request waits for its answer before the 409, and how often it looks. */
const IN_PROGRESS_WAIT_MS = 2000;
const IN_PROGRESS_POLL_MS = 50;
/** Headers of a stored response that describe the request in flight, not the answer: never replayed. */
const NOT_REPLAYED = new Set([
  "x-request-id",
  "ratelimit",
  "ratelimit-policy",
  "connection",
  "content-length",
  "date",
  "keep-alive",
  "transfer-encoding",
  "vary",
]);

function isUpload(value: unknown): value is UploadedFile {
  return typeof value === "object" && value !== null && Buffer.isBuffer((value as UploadedFile).content);
}

/**
 * A canonical form of a parsed body: object keys sorted at every depth, so `{"a":1,"b":2}` and
 * `{"b":2,"a":1}` are the same request; a multipart file part becomes its name, type and the
 * sha256 of its bytes (multipart bodies are hashed over their parts, not their boundaries).
 */
export function canonicalBody(value: unknown): unknown {
  if (isUpload(value)) {
    return {
      filename: value.filename,
      mime_type: value.mimeType,
      sha256: createHash("sha256").update(value.content).digest("hex"),
    };
  }
  if (Array.isArray(value)) return value.map(canonicalBody);
  if (typeof value === "object" && value !== null) {
    const obj = value as Record<string, unknown>;
    return Object.fromEntries(
      Object.keys(obj)
        .sort()
        .map((k) => [k, canonicalBody(obj[k])]),
    );
  }
  return value;
}

/** sha256 hex of `METHOD path?sorted-query` + "\n" + the canonical JSON of the body. */
export function requestHash(method: string, path: string, query: unknown, body: unknown): string {
  const head = `${method.toUpperCase()} ${path} ${JSON.stringify(canonicalBody(query ?? {}))}`;
  return createHash("sha256")
    .update(`${head}\n${JSON.stringify(canonicalBody(body ?? null))}`)
    .digest("hex");
}

/** Whether a response is kept for replay: see the semantics above. */
function keeps(status: number): boolean {
  return status < 500 && status !== 429;
}

function replayableHeaders(res: Response): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(res.getHeaders())) {
    const lower = name.toLowerCase();
    if (value === undefined || NOT_REPLAYED.has(lower) || lower.startsWith("access-control-")) continue;
    out[lower] = Array.isArray(value) ? value.join(", ") : String(value);
  }
  return out;
}

/**
 * A key for the writes a request makes downstream, the same for every retry of that request: the
 * client's Idempotency-Key with the request's hash (a key reused for another body differs). A
 * retry runs again when the first answer was a 5xx, after a write it made may have landed.
 */
export function retryKeyOf(idempotencyKey: string, requestHash: string): string {
  return createHash("sha256").update(idempotencyKey).update("\n").update(requestHash).digest("hex");
}

/** True when `idempotency` will act on the request: the feature is on and the header is sent. */
export function carriesIdempotencyKey(cfg: GatewayConfig, req: Request): boolean {
  return cfg.idempotency !== false && req.get("idempotency-key") !== undefined;
}

/**
 * Middleware of idempotent routes, after the body is parsed and before validation: without an
 * Idempotency-Key header (or with `cfg.idempotency` false) it does nothing. With one: 400 for a
 * malformed key; the rate limiter's deferred decision and BeginIdempotency awaited together (a
 * 429 releases a claim it took); replays, 422 or 409 per the semantics above; otherwise it
 * claims the key and records the route's answer (success or error) as it is sent. Billing
 * unavailable: 503 from the error middleware, the request not run (no guarantee is better than
 * a double charge).
 */
export function idempotency(ctx: GatewayContext, cfg: GatewayConfig): RequestHandler {
  // A running claim outlives the longest request (sync chat: the AI cap plus the RPC grace);
  // past it a retry may take over the key of a gateway that died mid-request.
  const leaseSeconds = Math.ceil((cfg.aiTimeoutMs + CHAT_DEADLINE_GRACE_MS) / 1000) + 60;
  return async (req, res, next) => {
    const key = req.get("idempotency-key");
    if (key === undefined || cfg.idempotency === false) return next();
    if (!KEY.test(key)) {
      const refusal = await rateLimitDecision(res);
      return next(refusal ?? new InputError("Idempotency-Key must be 1-255 printable ASCII characters without spaces"));
    }
    const state = requestState(res);
    const principal = state.principal;
    if (!principal) return next();
    const hash = requestHash(req.method, req.path, req.query, req.body);
    const opts = { principal, requestId: state.requestId, timeoutMs: BEGIN_TIMEOUT_MS, trace: state.trace };
    const complete = (response: edgePolicyV1.StoredResponse | undefined) =>
      ctx.edgePolicy.completeIdempotency({ idempotencyKey: key, requestHash: hash, response }, opts);
    const begin = () => ctx.edgePolicy.beginIdempotency({ idempotencyKey: key, requestHash: hash, leaseSeconds }, opts);
    let [refusal, begun] = await Promise.all([rateLimitDecision(res), begin()]);
    // A duplicate of a running request waits a little for its answer (a quick upload, or a
    // retry right behind the first's record) before the 409.
    const waitUntil = Date.now() + IN_PROGRESS_WAIT_MS;
    while (
      !refusal &&
      begun.outcome === edgePolicyV1.IdempotencyOutcome.IDEMPOTENCY_OUTCOME_IN_PROGRESS &&
      Date.now() < waitUntil
    ) {
      await new Promise((resolve) => setTimeout(resolve, IN_PROGRESS_POLL_MS));
      begun = await begin();
    }
    if (refusal) {
      if (begun.outcome === edgePolicyV1.IdempotencyOutcome.IDEMPOTENCY_OUTCOME_STARTED) {
        complete(undefined).catch((err) => state.log.warn({ err }, "idempotency key not released after a 429"));
      }
      return next(refusal);
    }
    switch (begun.outcome) {
      case edgePolicyV1.IdempotencyOutcome.IDEMPOTENCY_OUTCOME_REPLAY: {
        const stored = begun.response;
        if (!stored) throw new Error("contract: response is missing from a replay");
        for (const [name, value] of Object.entries(stored.headers)) res.setHeader(name, value);
        res.setHeader("Idempotent-Replayed", "true");
        res.status(stored.status).end(stored.body);
        return;
      }
      case edgePolicyV1.IdempotencyOutcome.IDEMPOTENCY_OUTCOME_MISMATCH:
        return next(
          new SchemaError([
            {
              type: "idempotency_key_reused",
              loc: ["header", "Idempotency-Key"],
              msg: "This Idempotency-Key was already used with a different request (method, path or body) in the last 24 h; use a new key for a new request",
            },
          ]),
        );
      case edgePolicyV1.IdempotencyOutcome.IDEMPOTENCY_OUTCOME_IN_PROGRESS:
        return next(
          new RedlineError(
            409,
            GrpcStatus.ABORTED,
            "A request with this Idempotency-Key is still in progress; retry after it completes to get its response",
            { body: { code: "idempotency_in_progress" }, headers: { "Retry-After": "1" } },
          ),
        );
      case edgePolicyV1.IdempotencyOutcome.IDEMPOTENCY_OUTCOME_STARTED:
        state.retryKey = retryKeyOf(key, hash);
        break;
      default:
        throw new Error(`contract: unknown idempotency outcome ${begun.outcome}`);
    }

    // Every answer of these routes (the handler's and the error middleware's) goes out through
    // res.json: it is recorded as it is sent. The record is written alongside the response, not
    // before it, to keep a billing round trip off the chat path: a retry racing the write finds
    // the claim running and waits for the record (above), never a second run.
    let settled = false;
    const send = res.json.bind(res);
    res.json = (body: unknown) => {
      if (settled) return send(body);
      settled = true;
      const status = res.statusCode;
      const stored = keeps(status)
        ? {
            status,
            headers: { "content-type": "application/json; charset=utf-8", ...replayableHeaders(res) },
            body: Buffer.from(JSON.stringify(body) ?? ""),
          }
        : undefined;
      complete(stored).catch((err) =>
        state.log.warn({ err }, "idempotency record not completed; the key frees when its lease ends"),
      );
      return send(body);
    };
    // A response that ended another way (a stream) leaves nothing to replay: free the key. A
    // dropped connection is not such an end: the handler still answers through res.json, and
    // that answer is what the client's retry must get (the case this header exists for).
    res.on("close", () => {
      if (settled || !res.writableFinished) return;
      settled = true;
      complete(undefined).catch((err) => state.log.warn({ err }, "idempotency key not released"));
    });
    next();
  };
}
