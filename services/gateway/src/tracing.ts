// The gateway's server span: one per HTTP request, continuing a client's `traceparent`, handed
// to the request's state (requestContext) so its gRPC calls and log lines carry it; named once
// the route is known.
import { startServerSpan, type TraceContext, tracingEnabled } from "@redline/service-kit";
import type { RequestHandler, Response } from "express";

const TRACE_KEY = "redlineTrace";

/** The request's server span context (set by traceRequests); undefined when tracing is off. */
export function requestTrace(res: Response): TraceContext | undefined {
  return res.locals[TRACE_KEY] as TraceContext | undefined;
}

/**
 * A middleware that wraps each request in a server span `<METHOD> <route template>` with
 * http.request.method, http.route and http.response.status_code, ended when the response is
 * done. With tracing off it is a bare `next()`.
 */
export function traceRequests(): RequestHandler {
  if (!tracingEnabled()) return (_req, _res, next) => next();
  return (req, res, next) => {
    const started = startServerSpan(req.method, req.headers, { "http.request.method": req.method });
    if (!started) return next();
    const { span } = started;
    res.locals[TRACE_KEY] = started.trace;
    // Sampled out: the trace goes on to the calls, with nothing to name or end here.
    if (!span.isRecording()) return next();
    // "close" also fires when the client went away before the response finished.
    res.once("close", () => {
      // req.route is the matched Express route, so the template (/v1/jobs/:job_id), never the id.
      const route = (req.route as { path?: string } | undefined)?.path;
      if (route) {
        span.updateName(`${req.method} ${route}`);
        span.setAttribute("http.route", route);
      }
      span.setAttribute("http.response.status_code", res.statusCode);
      // The request id the access log and every service's log lines carry: a trace found in a
      // tracing UI leads to its logs and back.
      const requestId = res.getHeader("X-Request-Id");
      if (requestId) span.setAttribute("redline.request_id", String(requestId));
      if (res.statusCode >= 500) span.setStatus({ code: 2 });
      span.end();
    });
    next();
  };
}
