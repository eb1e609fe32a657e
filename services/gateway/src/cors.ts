// Cross-origin access for browser clients: a review UI served from its own origin calls the API
// with fetch and follows the progress stream with EventSource and ?api_key= (unshown-parts.md,
// "Progress stream (SSE)"). Without these headers the browser blocks every such call.
//
// The exception is a route that needs no key and answers a credential: agent sign-up (issue #30).
// With `*` on it, any web page could sign up agents from its visitors' browsers (each visitor's
// own address, so the per-source cap counts each one apart) and read every new key. So such a
// route gets no CORS headers (the browser hides the answer from the page), its preflight is
// refused, and since a "simple" cross-origin POST (text/plain, no preflight) still reaches the
// server, any request carrying `Origin` is refused before anything is created: browsers send
// Origin on every cross-origin POST (Fetch standard), while agents and scripts send none.
import { status as GrpcStatus } from "@grpc/grpc-js";
import { RedlineError } from "@redline/service-kit";
import type { Request, RequestHandler } from "express";

/** Request headers a browser client may send (what the gateway reads). */
const CORS_ALLOW_HEADERS =
  "Authorization, Content-Type, Content-Encoding, Last-Event-ID, X-Request-Id, Idempotency-Key";

/**
 * Response headers a browser client may read: quota (Errors rule 2), rate limits, a replayed
 * Idempotency-Key answer, export file name and warnings, request id.
 */
const CORS_EXPOSE_HEADERS =
  "Retry-After, X-Usage-Limit, X-Usage-Used, X-Usage-Remaining, RateLimit, RateLimit-Policy, Idempotent-Replayed, " +
  "Content-Disposition, X-Export-Warnings, X-Request-Id";

/** Methods of the /v1 routes. */
const CORS_ALLOW_METHODS = "GET, POST, PATCH, DELETE";

/** How long a browser may cache a preflight answer, in seconds. */
const PREFLIGHT_MAX_AGE_S = 600;

/** 403 `{detail, code: "browser_origin"}` of a route that web pages may not call. */
class BrowserOriginError extends RedlineError {
  constructor() {
    super(
      403,
      GrpcStatus.PERMISSION_DENIED,
      "This endpoint is not available to web pages: call it from a program or agent, without an Origin header",
      { body: { code: "browser_origin" } },
    );
  }
}

/**
 * Middleware of a route with `refuseBrowsers`: a request carrying an `Origin` header (any value,
 * `null` included) is refused with BrowserOriginError before its body is read or anything runs.
 */
export const refuseBrowserOrigin: RequestHandler = (req, _res, next) => {
  next(req.get("origin") !== undefined ? new BrowserOriginError() : undefined);
};

/**
 * A matcher of the request paths of `templates` (`/v1/x/{id}` style), for cors(closed); with an
 * optional trailing slash, as Express routes them (strict routing off).
 */
export function pathMatcher(templates: string[]): (path: string) => boolean {
  const escapeRe = (literal: string) => literal.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
  const patterns = templates.map(
    (t) =>
      new RegExp(
        `^${t
          .split(/\{[A-Za-z0-9_]+\}/)
          .map(escapeRe)
          .join("[^/]+")}/?$`,
      ),
  );
  return (path) => patterns.some((p) => p.test(path));
}

/**
 * Lets any origin call the API, except the paths `closed` matches (routes with
 * `refuseBrowsers`): those get no CORS header at all, and their preflight is answered with
 * BrowserOriginError (403), allowing nothing. Safe for the rest because the key is the only credential and it travels in
 * the Authorization header or the query, never in a cookie: a page cannot act for a user without
 * already holding the key, so `Access-Control-Allow-Credentials` is never sent. A preflight
 * (OPTIONS with Access-Control-Request-Method) is answered 204 here, before auth, since browsers
 * send it without the Authorization header.
 */
export function cors(closed: (path: string) => boolean = () => false): RequestHandler {
  const isPreflight = (req: Request) => req.method === "OPTIONS" && req.get("access-control-request-method");
  return (req, res, next) => {
    if (closed(req.path)) {
      next(isPreflight(req) ? new BrowserOriginError() : undefined);
      return;
    }
    res.setHeader("Access-Control-Allow-Origin", "*");
    res.setHeader("Access-Control-Expose-Headers", CORS_EXPOSE_HEADERS);
    if (isPreflight(req)) {
      res.setHeader("Access-Control-Allow-Methods", CORS_ALLOW_METHODS);
      res.setHeader("Access-Control-Allow-Headers", CORS_ALLOW_HEADERS);
      res.setHeader("Access-Control-Max-Age", String(PREFLIGHT_MAX_AGE_S));
      res.status(204).end();
      return;
    }
    next();
  };
}
