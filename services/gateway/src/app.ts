// The Express application: request context, body cap, path checks, the registered routes
// (auth → body type → body → validation → handler), a JSON 404 and the one error middleware.
import type { Request, RequestHandler, Response } from "express";
import express from "express";
import { apiRoutes } from "./api/index.js";
import { defaultPlaygroundDirs, PLAYGROUND_PATH, playgroundStatic } from "./api/playground/static.js";
import { openApiRoute } from "./api/system/routes.js";
import { authenticate, createKeyResolver } from "./auth.js";
import { bodySizeGuard, bodyTypeGuard, hasBody, jsonBody, multipartBody } from "./body.js";
import { DEFAULT_RATE_LIMITS, DEFAULT_SOURCE_LIMITS, type GatewayConfig } from "./config.js";
import type { GatewayContext } from "./context.js";
import { cors, pathMatcher, refuseBrowserOrigin } from "./cors.js";
import { errorHandler, notFound } from "./error-handler.js";
import { carriesIdempotencyKey, idempotency } from "./idempotency.js";
import { httpMetrics } from "./metrics.js";
import { rateLimiter } from "./rate-limit.js";
import { requestContext, requestState } from "./request-context.js";
import { DEFAULT_RPC_TIMEOUT_MS, pathGuard, type Route, toExpressPath } from "./route-registry.js";
import { clientSource } from "./source-address.js";
import { anonymousLimiter, authFailureGate } from "./source-limit.js";
import { traceRequests } from "./tracing.js";

/** Query values as FastAPI sees scalars: a repeated parameter keeps its last value. */
function lastValues(query: Request["query"]): Record<string, unknown> {
  return Object.fromEntries(Object.entries(query).map(([k, v]) => [k, Array.isArray(v) ? v[v.length - 1] : v]));
}

function handler(route: Route, ctx: GatewayContext): RequestHandler {
  return async (req: Request, res: Response) => {
    const state = requestState(res);
    // A body in another content type is not parsed; it then fails validation as a non-object.
    const body = req.body !== undefined ? req.body : hasBody(req) ? "" : undefined;
    const result = await route.run(
      { query: lastValues(req.query), params: req.params, body },
      {
        ctx,
        requestId: state.requestId,
        log: state.log,
        principal: state.principal,
        // The client's address as the trusted proxies report it (TRUST_PROXY), else the TCP peer,
        // IPv6 by its /64 (source-address.ts): what billing counts agent sign-ups by.
        sourceAddress: clientSource(req),
        retryKey: state.retryKey,
        rpc: (timeoutMs = DEFAULT_RPC_TIMEOUT_MS) => ({
          principal: state.principal ?? undefined,
          requestId: state.requestId,
          timeoutMs,
          trace: state.trace,
        }),
      },
    );
    for (const [name, value] of Object.entries(result.headers ?? {})) res.setHeader(name, value);
    res.status(result.status ?? route.response.status);
    if (result.send) await result.send(res);
    else res.json(result.body);
  };
}

/**
 * Builds the gateway's Express app over `ctx`. Order per request: request id → CORS (a
 * preflight ends here; none on routes that refuse browsers) → declared body cap (413, reads
 * nothing) → path checks (400) → route match (else 404) → on a route that refuses browsers, a
 * request with Origin (403) → keyless routes: the source's bucket (429) → auth (the source's
 * failure gate before billing: 429; 401/503) → rate limit of the key and account buckets of the
 * route's class (429) → body type and
 * encoding (415) → body (400/413/422) → Idempotency-Key on the routes that declare it (replay,
 * 409, 422) → validation (422) → handler. Auth comes before any body is read, so an unauthenticated caller
 * costs no parsing; an error answered while the body is still unread closes the connection (see
 * errorHandler).
 */
export function createApp(ctx: GatewayContext, cfg: GatewayConfig): express.Express {
  const app = express();
  app.disable("x-powered-by");
  app.set("etag", false);
  app.set("case sensitive routing", true);
  // Off unless configured: req.ip is then the TCP peer, whatever X-Forwarded-For says.
  app.set("trust proxy", cfg.trustProxy ?? false);
  app.use(traceRequests());
  app.use(requestContext(ctx.log));
  app.use(httpMetrics());
  // Before the body cap and auth, so a preflight is answered and every refusal is readable cross-origin.
  const routes = apiRoutes();
  app.use(cors(pathMatcher(routes.filter((r) => r.refuseBrowsers).map((r) => r.path))));
  app.use(bodySizeGuard(cfg));

  app.use(pathGuard(routes));
  const resolver = createKeyResolver(ctx, cfg.authCacheTtlMs);
  const sourceLimits = cfg.sourceLimits ?? DEFAULT_SOURCE_LIMITS;
  // One gate for both flavours of auth: a source's failures count wherever they happen.
  const gate = authFailureGate(sourceLimits.authFailuresPerMinute);
  const auth = authenticate(resolver, gate);
  const queryKeyAuth = authenticate(resolver, gate, { queryKey: true });
  const anonymous = anonymousLimiter(sourceLimits);
  const json = jsonBody(cfg);
  const multipart = multipartBody(cfg);
  const limit = rateLimiter(ctx, cfg.rateLimits ?? DEFAULT_RATE_LIMITS, cfg.accountRateLimits);
  const idempotent = idempotency(ctx, cfg);
  for (const route of [...routes, openApiRoute(routes)]) {
    const chain: RequestHandler[] = [];
    if (route.refuseBrowsers) chain.push(refuseBrowserOrigin);
    // The /v1 routes that take no key reach billing unauthenticated: limited per source first.
    if (!route.auth && route.limiter) chain.push(anonymous);
    if (route.auth) chain.push(route.queryKeyAuth ? queryKeyAuth : auth);
    // Before the body is read: a throttled caller costs no parsing.
    // Idempotent routes called with a key overlap the limiter's round trip with BeginIdempotency.
    if (route.auth && route.limiter) {
      chain.push(limit(route.limiter, route.idempotent ? { defer: (req) => carriesIdempotencyKey(cfg, req) } : {}));
    }
    if (route.body) {
      const mediaType = route.bodyMediaType ?? "application/json";
      chain.push(bodyTypeGuard(mediaType), mediaType === "multipart/form-data" ? multipart : json);
    }
    if (route.idempotent) chain.push(idempotent);
    chain.push(handler(route, ctx));
    app[route.method](toExpressPath(route.path), ...chain);
  }

  // The review playground's static files: public, no key (the page asks for one).
  app.use(PLAYGROUND_PATH, playgroundStatic(cfg.playgroundDir ? [cfg.playgroundDir] : defaultPlaygroundDirs()));
  app.use(notFound);
  app.use(errorHandler);
  return app;
}
