// The gateway's metric labels: route templates (never ids) and the cause of a 429.
import { describe, expect, it } from "vitest";
import { routeLabel, throttleCause, UNMATCHED_ROUTE } from "./metrics.js";

describe("gateway metric labels", () => {
  it("labels a matched route by its registry template and anything else as unmatched", () => {
    expect(routeLabel("/v1/sessions/:session_id/history")).toBe("/v1/sessions/{session_id}/history");
    expect(routeLabel("/health")).toBe("/health");
    expect(routeLabel(undefined)).toBe(UNMATCHED_ROUTE);
  });

  it("names a 429's cause from its body code, other for anything unknown", () => {
    expect(throttleCause({ detail: "x", code: "quota_exhausted" })).toBe("quota");
    expect(throttleCause({ code: "rate_limited", limiter: "expensive" })).toBe("rate_limit");
    expect(throttleCause({ code: "auth_rate_limited" })).toBe("source");
    expect(throttleCause({ code: "anonymous_rate_limited" })).toBe("source");
    expect(throttleCause({ code: "email_export_limit" })).toBe("cooldown");
    expect(throttleCause({ code: "signup_limit" })).toBe("cooldown");
    expect(throttleCause({ code: "something-new" })).toBe("other");
    expect(throttleCause("text")).toBe("other");
    expect(throttleCause(null)).toBe("other");
  });
});
