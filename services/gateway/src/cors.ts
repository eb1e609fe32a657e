// Cross-origin access for browser clients: a review UI served from its own origin calls the API
// with fetch and follows the progress stream with EventSource and ?api_key= (unshown-parts.md,
// "Progress stream (SSE)"). Without these headers the browser blocks every such call.
import type { RequestHandler } from "express";

/** Request headers a browser client may send (what the gateway reads). */
export const CORS_ALLOW_HEADERS =
  "Authorization, Content-Type, Content-Encoding, Last-Event-ID, X-Request-Id, Idempotency-Key";

/**
 * Response headers a browser client may read: quota (Errors rule 2), rate limits, a replayed
 * Idempotency-Key answer, export file name and warnings, request id.
 */
export const CORS_EXPOSE_HEADERS =
  "Retry-After, X-Usage-Limit, X-Usage-Used, X-Usage-Remaining, RateLimit, RateLimit-Policy, Idempotent-Replayed, " +
  "Content-Disposition, X-Export-Warnings, X-Request-Id";

/** Methods of the /v1 routes. */
export const CORS_ALLOW_METHODS = "GET, POST, PATCH, DELETE";

/** How long a browser may cache a preflight answer, in seconds. */
const PREFLIGHT_MAX_AGE_S = 600;

/**
 * Lets any origin call the API. Safe because the key is the only credential and it travels in
 * the Authorization header or the query, never in a cookie: a page cannot act for a user without
 * already holding the key, so `Access-Control-Allow-Credentials` is never sent. A preflight
 * (OPTIONS with Access-Control-Request-Method) is answered 204 here, before auth, since browsers
 * send it without the Authorization header.
 */
export function cors(): RequestHandler {
  return (req, res, next) => {
    res.setHeader("Access-Control-Allow-Origin", "*");
    res.setHeader("Access-Control-Expose-Headers", CORS_EXPOSE_HEADERS);
    if (req.method === "OPTIONS" && req.get("access-control-request-method")) {
      res.setHeader("Access-Control-Allow-Methods", CORS_ALLOW_METHODS);
      res.setHeader("Access-Control-Allow-Headers", CORS_ALLOW_HEADERS);
      res.setHeader("Access-Control-Max-Age", String(PREFLIGHT_MAX_AGE_S));
      res.status(204).end();
      return;
    }
    next();
  };
}
