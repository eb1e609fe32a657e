// Per-route HTTP metrics of the gateway, in the process registry of service-kit: request count
// by route template, method and status code, latency by route template, and 429s by cause.
import { counter, histogram, METRICS_PREFIX, metricsEnabled } from "@redline/service-kit";
import type { RequestHandler, Response } from "express";

/** The route label of a request no route matched (404s, refusals before routing): one series, not one per path. */
export const UNMATCHED_ROUTE = "unmatched";

/** Body `code` of a 429 → its cause label; anything else counts as "other". */
const THROTTLE_CAUSES: Record<string, string> = {
  quota_exhausted: "quota",
  // The per-key and per-account token buckets of each endpoint class (rate-limit.ts).
  rate_limited: "rate_limit",
  // Per-source limits before billing (source-limit.ts): failed keys, keyless requests.
  auth_rate_limited: "source",
  anonymous_rate_limited: "source",
  // Per-endpoint windows: email exports per account, agent sign-ups per source, takeover links.
  email_export_limit: "cooldown",
  signup_limit: "cooldown",
  handoff_limit: "cooldown",
};

/** "/v1/sessions/:session_id" → "/v1/sessions/{session_id}": the registry's template, never an id. */
export function routeLabel(expressPath: unknown): string {
  return typeof expressPath === "string" ? expressPath.replace(/:([A-Za-z0-9_]+)/g, "{$1}") : UNMATCHED_ROUTE;
}

/** The cause label of a 429 answered with body `body`. */
export function throttleCause(body: unknown): string {
  const code = typeof body === "object" && body !== null ? (body as { code?: unknown }).code : undefined;
  return (typeof code === "string" && THROTTLE_CAUSES[code]) || "other";
}

/**
 * Express middleware counting every answered request in
 * redline_http_requests_total{method,route,code}, its duration in
 * redline_http_request_duration_seconds{method,route}, and each 429 in
 * redline_http_throttled_total{cause} (quota, rate_limit, source, cooldown, other). `route` is the
 * matched template (the route registry's path), or "unmatched".
 */
export function httpMetrics(): RequestHandler {
  const requests = counter(
    `${METRICS_PREFIX}http_requests_total`,
    "HTTP requests answered by the gateway, by route template, method and status code.",
    ["method", "route", "code"],
  );
  const seconds = histogram(
    `${METRICS_PREFIX}http_request_duration_seconds`,
    "Time from a request's arrival to the end of its response, by route template and method.",
    ["method", "route"],
  );
  const throttled = counter(
    `${METRICS_PREFIX}http_throttled_total`,
    "Requests answered 429, by cause: quota (monthly operations), rate_limit (per-key token buckets), cooldown (per-endpoint windows: email exports, sign-ups, takeover links), other.",
    ["cause"],
  );
  // The series of each method, route and status code, resolved on their first request: building
  // the label objects on every request cost more than the increments (routeLabel's regex, a spread).
  const series = new Map<
    string,
    { seconds: ReturnType<typeof seconds.labels>; requests: ReturnType<typeof requests.labels> }
  >();
  const seriesOf = (method: string, expressPath: unknown, code: number) => {
    const key = `${method} ${typeof expressPath === "string" ? expressPath : ""} ${code}`;
    let found = series.get(key);
    if (!found) {
      const labels = { method, route: routeLabel(expressPath) };
      found = { seconds: seconds.labels(labels), requests: requests.labels({ ...labels, code: String(code) }) };
      series.set(key, found);
    }
    return found;
  };
  return (req, res, next) => {
    if (!metricsEnabled()) return next();
    const started = performance.now();
    let cause: string | undefined;
    // Only a 429's body says which limit it was; peek at it as it is sent.
    const json = res.json;
    res.json = function (this: Response, body: unknown) {
      if (this.statusCode === 429) cause = throttleCause(body);
      return json.call(this, body);
    };
    // "close" also ends a stream the client dropped, which never finishes.
    res.once("close", () => {
      // req.route is the matched route (set during dispatch); without one nothing matched.
      const answered = seriesOf(req.method, req.route?.path, res.statusCode);
      answered.seconds.observe((performance.now() - started) / 1000);
      answered.requests.inc();
      if (res.statusCode === 429) throttled.inc({ cause: cause ?? "other" });
    });
    next();
  };
}
