// Per-request state: the request id (X-Request-Id in and out, forwarded to every gRPC call), a
// child logger, the authenticated principal, and one access-log line when the response ends.
import { randomUUID } from "node:crypto";
import { type Logger, type Principal, type TraceContext, traceLogFields } from "@redline/service-kit";
import type { Request, RequestHandler, Response } from "express";
import { requestTrace } from "./tracing.js";

/** What the gateway knows about the request in flight. */
export interface RequestState {
  requestId: string;
  /** Carries the request id, and the trace and span ids when tracing is on. */
  log: Logger;
  /** The request's server span (traceRequests), for its gRPC calls; undefined when tracing is off. */
  trace?: TraceContext;
  /** Set by the auth middleware; null on routes without auth. */
  principal: Principal | null;
  /** The API key's id (never the key), for logs. */
  keyId?: string;
  /**
   * Set by the idempotency middleware once it claimed the request's Idempotency-Key: the same for
   * every retry of this exact request (retryKeyOf), for the writes it makes downstream.
   */
  retryKey?: string;
}

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;
const STATE_KEY = "redline";

/** The state of `res`'s request; the request-context middleware must have run. */
export function requestState(res: Response): RequestState {
  return res.locals[STATE_KEY] as RequestState;
}

/**
 * Takes the caller's X-Request-Id when it is 1-128 characters of [A-Za-z0-9._:-] (else mints a
 * UUID), echoes it on the response and logs method, path, status and duration at the end.
 * Query strings are not logged, since they may carry credentials.
 */
export function requestContext(log: Logger): RequestHandler {
  return (req: Request, res: Response, next) => {
    const given = req.get("x-request-id");
    const requestId = given && REQUEST_ID.test(given) ? given : randomUUID();
    const trace = requestTrace(res);
    const state: RequestState = {
      requestId,
      log: log.child({ requestId, ...traceLogFields(trace) }),
      trace,
      principal: null,
    };
    res.locals[STATE_KEY] = state;
    res.setHeader("X-Request-Id", requestId);
    const started = process.hrtime.bigint();
    res.on("finish", () => {
      const durationMs = Number(process.hrtime.bigint() - started) / 1e6;
      state.log.info(
        {
          method: req.method,
          path: req.path,
          status: res.statusCode,
          durationMs: Math.round(durationMs),
          keyId: state.keyId,
        },
        "request",
      );
    });
    next();
  };
}
