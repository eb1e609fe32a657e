// GET /v1/usage: the caller's usage without spending an operation (interface-spec Limits:
// list and read calls are non-billable).
import { defineRoute, type Route } from "../../route-registry.js";
import { usageHeaders, withUsageHeaders } from "../shared/mappers.js";
import { answers, endpoint } from "../shared/routes.js";
import { usageReportToJson } from "./mappers.js";
import * as schemas from "./schemas.js";

/** GET /v1/usage: usage object + period_start/period_end + recent_charges; free, with X-Usage-*. */
export const getUsageRoute = defineRoute({
  ...endpoint("GET /v1/usage", "getUsage", "Read the caller's usage", "usage"),
  description:
    "The usage object of the key's owner (the organization for organization keys) in its current billing " +
    "period, the live promotion grants, the period bounds and the latest 20 charges. Costs nothing.",
  ...withUsageHeaders(answers(schemas.UsageReportSchema, "The caller's usage.", [503])),
  async handle(_request, call) {
    const res = await call.ctx.billing.getUsage({}, call.rpc());
    const body = usageReportToJson(res, call.principal?.plan ?? "");
    return { body, headers: usageHeaders(body) };
  },
});

/** The usage routes (api/index.ts mounts every area's list). */
export const usageRoutes: Route[] = [getUsageRoute];
